"""What every domain shares and nothing domain-specific: errors, pages, the HTTP cache, auth, claims,
time, Retry-After, JSON Schema error messages and job declarations."""
