"""Pages for people: the race, signals, chips, leaderboards and sources, rendered by the service.

Every page reads through the same domain services as the JSON API and is kept in the same read cache
(:data:`chipwatch.kit.httpcache.read_cache`); every asset it loads (style sheet, script, icon, the API
documentation's scripts) is served by the service from the installed package, so the pages work on a
closed network.
"""
