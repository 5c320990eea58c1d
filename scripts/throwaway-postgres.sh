#!/usr/bin/env bash
# A throw-away PostgreSQL server on loopback, in a directory of its own, for tests and local
# experiments with collage-run --db postgresql://...
#
#   throwaway-postgres.sh start DIR   initdb + pg_ctl start in DIR (created), listening on
#                                     127.0.0.1 at a free port; prints the server's URL (and
#                                     writes it to DIR/url)
#   throwaway-postgres.sh start-or-skip DIR   the same, but where PostgreSQL is not installed it
#                                     writes why to DIR/skipped and exits 0 (ctest's fixture)
#   throwaway-postgres.sh stop DIR    stops it and removes DIR
#
# A server left in DIR by an earlier start is stopped first. As root, when the server's user cannot
# reach DIR (a directory above it is private, as `mktemp -d` makes them), the server's data and
# socket go to a private directory under /tmp named in DIR/server-home, removed by stop.
#
# The server needs Debian's postgresql package (initdb and pg_ctl in /usr/lib/postgresql/*/bin or
# on PATH). It refuses to run as root, so as root it runs as user `postgres` (the package makes
# it), else `nobody`, in a DIR owned by that user. fsync is off: the data outlives a killed client
# or server process, not a crash of the machine (TC_POSTGRES_SERVER_OPTIONS="-c fsync=on" turns it
# on; the variable's server options follow the script's and win). Exit status: 0, 3 when PostgreSQL is not
# installed (one line on stderr says so), 1 when the server does not start (its log follows).
set -euo pipefail

usage() {
  echo "usage: $0 start DIR | start-or-skip DIR | stop DIR" >&2
  exit 2
}
[[ $# -eq 2 ]] || usage
command=$1
dir=$2

find_bin() {
  local name=$1 candidate
  if [[ -n ${TC_POSTGRES_BIN:-} && -x $TC_POSTGRES_BIN/$name ]]; then echo "$TC_POSTGRES_BIN/$name"; return; fi
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [[ -x $candidate/$name ]] && { echo "$candidate/$name"; return; }
  done
  command -v "$name" 2>/dev/null || true
}

initdb=$(find_bin initdb)
pg_ctl=$(find_bin pg_ctl)
if [[ -z $initdb || -z $pg_ctl ]]; then
  why="PostgreSQL server not installed (no initdb and pg_ctl; apt-get install postgresql)"
  echo "$why" >&2
  if [[ $command == start-or-skip ]]; then
    mkdir -p "$dir"
    echo "$why" >"$dir/skipped"
    exit 0
  fi
  exit 3
fi

# The user the server runs as, and how to run a command as that user.
as_user=()
if [[ $(id -u) -eq 0 ]]; then
  user=postgres
  id -u "$user" >/dev/null 2>&1 || user=nobody
  as_user=(runuser -u "$user" --)
fi

stop() {
  local home=$dir
  [[ -f $dir/server-home ]] && home=$(<"$dir/server-home")
  [[ -d $home/data ]] && "${as_user[@]}" "$pg_ctl" -D "$home/data" -m immediate -w stop >/dev/null 2>&1 || true
  [[ $home == "$dir" ]] || rm -rf "$home"
  rm -rf "$dir"
}

case $command in
  start | start-or-skip)
    stop
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    home=$dir  # where the server's data and socket live
    [[ ${#as_user[@]} -eq 0 ]] || chown "$user" "$dir"
    chmod 700 "$dir"
    if ! "${as_user[@]}" test -w "$dir"; then
      [[ ${#as_user[@]} -gt 0 ]] || { echo "$dir is not writable" >&2; exit 1; }
      home=$(mktemp -d /tmp/collage-postgres.XXXXXX)
      chown "$user" "$home"
      echo "$home" >"$dir/server-home"
    fi
    "${as_user[@]}" "$initdb" -D "$home/data" -U collage --auth=trust -E UTF8 --no-locale --no-sync >"$home/initdb.log" 2>&1 || {
      cat "$home/initdb.log" >&2
      exit 1
    }
    for _ in 1 2 3; do
      # A port in 20000..59999 picked at random; taken, the start fails and another is tried.
      port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
      if "${as_user[@]}" "$pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 60 \
          -o "-p $port -k $home -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100 ${TC_POSTGRES_SERVER_OPTIONS:-}" start >/dev/null; then
        echo "postgresql://collage@127.0.0.1:$port/postgres" | tee "$dir/url"
        exit 0
      fi
    done
    cat "$home/server.log" >&2
    exit 1
    ;;
  stop) stop ;;
  *) usage ;;
esac
