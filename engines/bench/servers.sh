# The setup run.sh and callgrind.sh share (sourced; needs $here, $bench and $scratch).

# The first line of OUT: when, at which commit, on what, with which arguments (`command`
# is the script and its arguments; EXTRA is more JSON fields, each with its leading comma).
meta_line() {
  local command=$1 extra=$2
  echo "{\"meta\":true,\"date\":\"$(date -u +%FT%TZ)\",\"commit\":\"$(git -C "$here" rev-parse --short HEAD)\",\"cpu\":\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\",\"cores\":$(nproc),\"load_before\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"command\":\"$command\"$extra}"
}

# The proxy's counts in its STATS file: connections, requests and bytes, on one line (zeros
# before the first connection).
counts() {
  awk '{n[$1]=$2} END {print n["connections"]+0, n["requests"]+0, n["bytes"]+0}' "$1" 2>/dev/null \
    || echo 0 0 0
}

# Starts SERVER (local-s3 or moto; SERVER+tls starts the same, for start_proxy to put TLS in
# front) and exports its credentials; sets $upstream (its endpoint) and $keep (a descriptor:
# the server runs until it is closed).
start_server() {
  local server=$1
  mkfifo "$scratch/$server.in"
  case ${server%+tls} in
    local-s3)
      export AWS_ACCESS_KEY_ID=local-s3-access-key AWS_SECRET_ACCESS_KEY=local-s3-secret-key-0123456789 AWS_REGION=us-east-1
      "$bench" serve-local-s3 < "$scratch/$server.in" > "$scratch/$server.out" &
      ;;
    moto)
      export AWS_ACCESS_KEY_ID=moto-access-key AWS_SECRET_ACCESS_KEY=moto-secret-key AWS_REGION=us-east-1
      "${S3W_MOTO_PYTHON:?the interop venv python}" "$here/../crates/s3-wire-tokio/tests/interop/moto_server.py" < "$scratch/$server.in" > "$scratch/$server.out" 2>/dev/null &
      ;;
  esac
  exec {keep}> "$scratch/$server.in"
  until [ -s "$scratch/$server.out" ]; do sleep 0.1; done
  upstream=$(head -1 "$scratch/$server.out")
  case $upstream in http*) ;; *) upstream="http://127.0.0.1:$upstream" ;; esac
}

# Starts the counting proxy in front of $upstream, counting into $scratch/SERVER.stats; sets
# $proxy (its endpoint) and $proxy_pid. For SERVER+tls the proxy serves TLS, and
# AWS_CA_BUNDLE names its CA for the processes started after it (unset otherwise).
start_proxy() {
  local server=$1 ca_file=
  unset AWS_CA_BUNDLE
  case $server in *+tls) ca_file=$scratch/$server.ca.pem ;; esac
  # Without the fifo's writing end: the server sees its end when the script closes it.
  "$bench" proxy "$upstream" "$scratch/$server.stats" ${ca_file:+"$ca_file"} > "$scratch/$server.proxy" {keep}>&- &
  proxy_pid=$!
  until [ -s "$scratch/$server.proxy" ]; do sleep 0.1; done
  proxy=$(head -1 "$scratch/$server.proxy")
  if [ -n "$ca_file" ]; then export AWS_CA_BUNDLE=$ca_file; fi
}
