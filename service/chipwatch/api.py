"""Former home of the shared API pieces, now in :mod:`chipwatch.kit`; kept until every domain imports
from the kit, then removed."""

from chipwatch.kit.auth import AdminDep, require_admin, require_reader  # noqa: F401
from chipwatch.kit.errors import (  # noqa: F401
    PROBLEM_JSON,
    ApiError,
    Conflict,
    NotFound,
    Problem,
    install_error_handlers,
    invalid,
    problem_response,
)
from chipwatch.kit.httpcache import (  # noqa: F401
    HotReadMiddleware,
    ReadCache,
    cache_key,
    cached_json,
    read_cache,
)
from chipwatch.kit.pagination import (  # noqa: F401
    MAX_LIMIT,
    CursorQ,
    LimitQ,
    Page,
    decode_cursor,
    encode_cursor,
)
from chipwatch.kit.sessions import read_session, write_session  # noqa: F401
