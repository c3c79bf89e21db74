# chipwatch: API (`chipwatch serve`) and worker (`chipwatch worker`) image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CHIPWATCH_DATA_DIR=/data \
    CHIPWATCH_PROJECT_ROOT=/app

WORKDIR /app
RUN useradd --system --create-home --uid 10001 chipwatch \
    && mkdir -p /data && chown chipwatch:chipwatch /data

COPY pyproject.toml README.md alembic.ini ./
COPY service ./service
COPY migrations ./migrations
COPY schema ./schema
COPY seed_data ./seed_data
RUN pip install --upgrade pip && pip install -e '.[postgres]'

USER chipwatch
EXPOSE 8000
VOLUME ["/data"]
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status == 200 else 1)"
CMD ["chipwatch", "serve", "--host", "0.0.0.0", "--port", "8000"]
