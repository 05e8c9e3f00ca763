# Shared by the .ci/setup.d scripts (sourced, not run): root rights for apt, and npm installs
# that trust the system's certificates.

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# apt_install PACKAGE...: Debian packages, quietly.
apt_install() {
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# npm_install SECONDS PREFIX PACKAGE...: npm packages into PREFIX/node_modules (Node and npm
# from apt when missing). npm trusts only its own CA list; behind a TLS-inspecting proxy every
# fetch then fails with SELF_SIGNED_CERT_IN_CHAIN and is retried for minutes, so it is handed
# the system trust store. Bounded by SECONDS, so a registry that does not answer fails the step
# instead of the CI clock.
npm_install() {
  local seconds=$1 prefix=$2 ca
  shift 2
  for ca in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [ -n "$ca" ] && [ -f "$ca" ]; then
      export npm_config_cafile="$ca"
      break
    fi
  done
  command -v npm >/dev/null || apt_install nodejs npm
  timeout "$seconds" npm install --silent --no-audit --no-fund --fetch-retries=2 \
    --prefix "$prefix" "$@"
}
