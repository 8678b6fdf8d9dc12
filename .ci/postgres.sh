#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on 127.0.0.1 for the dynamic stage's
# PostgreSQL tests, installing the server from the distribution packages when
# it is missing.
#
# Usage:   source .ci/postgres.sh          (exports RESUME_AUDIT_PG_DSN in the caller)
#      or   eval "$(.ci/postgres.sh)"       (stdout is exactly one `export ...` line)
#
# Every log line goes to stderr. When GITHUB_ENV is set the DSN is also
# appended there for later workflow steps. Idempotent: a second run reuses the
# running server, role and database.
set -euo pipefail

PORT="${RESUME_AUDIT_PG_PORT:-54329}"
ROOT="${RESUME_AUDIT_PG_ROOT:-/tmp/resume-audit-pg}"
DATA="$ROOT/data"
DB_USER="resume_audit"
DB_PASS="resume_audit"
DB_NAME="resume_audit"

log() { printf '[postgres.sh] %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

find_bindir() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

BINDIR="$(find_bindir || true)"
if [ -z "$BINDIR" ] || [ ! -x "$BINDIR/initdb" ]; then
    log "PostgreSQL server not found; installing it with apt-get"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    BINDIR="$(find_bindir)"
fi
log "using $BINDIR"

# The server refuses to run as root: run it as the `postgres` system user then.
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$ROOT" postgres
    RUN=(runuser -u postgres --)
    mkdir -p "$ROOT"
    chown postgres "$ROOT"
else
    RUN=()
    mkdir -p "$ROOT"
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initialising a cluster in $DATA"
    "${RUN[@]}" "$BINDIR/initdb" -D "$DATA" -U postgres -A trust --no-sync >&2
fi

if ! "${RUN[@]}" "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "starting the server on 127.0.0.1:$PORT"
    "${RUN[@]}" "$BINDIR/pg_ctl" -D "$DATA" -l "$ROOT/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $ROOT -c fsync=off -c max_connections=200" start >&2
fi

PSQL=("$BINDIR/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt)
if [ "$("${PSQL[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'")" != "1" ]; then
    "${PSQL[@]}" -c "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS'" >&2
fi
if [ "$("${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != "1" ]; then
    "${PSQL[@]}" -c "CREATE DATABASE $DB_NAME OWNER $DB_USER" >&2
fi

DSN="postgresql://$DB_USER:$DB_PASS@127.0.0.1:$PORT/$DB_NAME"
log "ready: $DSN"
if [ -n "${GITHUB_ENV:-}" ]; then
    echo "RESUME_AUDIT_PG_DSN=$DSN" >> "$GITHUB_ENV"
fi
export RESUME_AUDIT_PG_DSN="$DSN"
echo "export RESUME_AUDIT_PG_DSN=$DSN"
