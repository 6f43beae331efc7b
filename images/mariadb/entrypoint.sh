#!/bin/sh
# minik8s/mariadb's entrypoint (busybox sh): with an empty data directory (/var/lib/mysql, a
# mounted volume) it creates the system tables with `mariadbd --bootstrap`, then the accounts the
# environment asks for through a temporary server without networking (as the official image does),
# then execs mariadbd, which becomes the container's main process. The environment is the
# official image's:
#   MARIADB_ROOT_PASSWORD   root's password (root@'%' over TCP; root@localhost takes it too, or
#                           no password at all from the container's own root: unix_socket)
#   MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1   start without one (root only through the socket)
#   MARIADB_DATABASE, MARIADB_USER, MARIADB_PASSWORD   a database and its owner account
# (MYSQL_* works for each of them too.) *_FILE variants read the value from a file (a Secret).
# Only a data directory without mysql/ is initialised; an interrupted initialisation (the marker
# below is still there) is removed and done again, never a data directory that was ever complete.
set -eu

datadir=/var/lib/mysql
marker="$datadir/.minik8s-initializing"

log() { echo "$(date -u '+%Y-%m-%d %H:%M:%S') [entrypoint] $*" >&2; }

# setting NAME: $MARIADB_NAME, else $MYSQL_NAME, else the contents of the file $MARIADB_NAME_FILE.
setting() {
  eval "v=\${MARIADB_$1:-\${MYSQL_$1:-}}"
  eval "f=\${MARIADB_$1_FILE:-\${MYSQL_$1_FILE:-}}"
  if [ -z "$v" ] && [ -n "$f" ]; then v=$(cat "$f"); fi
  printf '%s' "$v"
}

# A string literal for SQL: backslashes and single quotes doubled.
sql_string() { printf "'%s'" "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/''/g")"; }

# The accounts: root's password, root@'%', the optional database and user.
accounts_sql() {
  root_password=$(setting ROOT_PASSWORD)
  if [ -n "$root_password" ]; then
    pw=$(sql_string "$root_password")
    echo "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD($pw);"
    echo "CREATE USER root@'%' IDENTIFIED BY $pw;"
    echo "GRANT ALL PRIVILEGES ON *.* TO root@'%' WITH GRANT OPTION;"
    echo "GRANT PROXY ON ''@'%' TO root@'%' WITH GRANT OPTION;"
  fi
  database=$(setting DATABASE)
  if [ -n "$database" ]; then
    echo "CREATE DATABASE IF NOT EXISTS \`$(printf '%s' "$database" | sed 's/`/``/g')\`;"
  fi
  user=$(setting USER)
  if [ -n "$user" ]; then
    echo "CREATE USER $(sql_string "$user")@'%' IDENTIFIED BY $(sql_string "$(setting PASSWORD)");"
    if [ -n "$database" ]; then
      echo "GRANT ALL ON \`$(printf '%s' "$database" | sed 's/`/``/g')\`.* TO $(sql_string "$user")@'%';"
    fi
  fi
}

initialize() {
  if [ -z "$(setting ROOT_PASSWORD)" ] && [ -z "$(setting ALLOW_EMPTY_ROOT_PASSWORD)" ]; then
    log "error: the data directory $datadir is empty and no root password is set:" \
      "set MARIADB_ROOT_PASSWORD (or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1)"
    exit 1
  fi
  if [ -e "$marker" ]; then
    log "removing an interrupted initialisation of $datadir"
    find "$datadir" -mindepth 1 -maxdepth 1 ! -name lost+found -exec rm -rf {} +
  fi
  log "initialising the empty data directory $datadir"
  touch "$marker"
  chown mysql:mysql "$marker"
  # Built in the container's own file system and then copied: on a network file system
  # (GlusterFS) creating the system tables file by file takes several times longer than a copy.
  scratch=/tmp/mariadb-init
  rm -rf "$scratch"
  mkdir -p "$scratch"
  chown mysql:mysql "$scratch"
  {
    echo "CREATE DATABASE IF NOT EXISTS mysql;"
    echo "USE mysql;"
    echo "SET @auth_root_socket='root';"
    cat /usr/share/mysql/mysql_system_tables.sql /usr/share/mysql/mysql_performance_tables.sql \
      /usr/share/mysql/mysql_system_tables_data.sql /usr/share/mysql/fill_help_tables.sql \
      /usr/share/mysql/maria_add_gis_sp_bootstrap.sql /usr/share/mysql/mysql_sys_schema.sql
    # The server's own host name (the pod's) is no account of ours.
    echo "DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '%');"
  } | "$@" --datadir="$scratch" --bootstrap --log-warnings=0 --enforce-storage-engine="" \
    --max-allowed-packet=8M --net-buffer-length=16K --skip-networking
  # Account statements need the grant tables loaded, which --bootstrap does not do: a server on
  # a private socket only, and root through unix_socket (this shell runs as root).
  sock=/run/mysqld/init.sock
  "$@" --datadir="$scratch" --skip-networking --socket="$sock" --log-warnings=0 &
  pid=$!
  tries=0
  until mariadb --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { log "error: the server exited during initialisation"; exit 1; }
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || { log "error: the server did not start in 60 s"; exit 1; }
    sleep 0.1
  done
  accounts_sql | mariadb --socket="$sock" -uroot
  kill -TERM "$pid"
  wait "$pid"
  mariadbd --version | sed -n 's/.*Ver \([^ ]*\).*/\1/p' | tr -d '\n' >"$scratch/mysql_upgrade_info"
  chown mysql:mysql "$scratch/mysql_upgrade_info"
  cp -a "$scratch/." "$datadir/"
  rm -rf "$scratch"
  rm -f "$marker"
  log "initialised $datadir"
}

# No arguments, or ones that start with '-', are mariadbd's (args: [--innodb-buffer-pool-size=64M]).
if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- mariadbd "$@"; fi

if [ "$1" = mariadbd ] || [ "$1" = mysqld ]; then
  mkdir -p "$datadir" /run/mysqld
  chown mysql:mysql /run/mysqld
  # A fresh volume belongs to root; the server runs as mysql (999).
  find "$datadir" \! -user mysql -exec chown mysql:mysql {} +
  if [ -e "$marker" ] || [ ! -d "$datadir/mysql" ]; then initialize "$@"; fi
fi
exec "$@"
