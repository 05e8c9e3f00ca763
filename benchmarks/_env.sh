# Sourced by each benchmark's setup.sh: `bench_env NAME PIP-ARGS...` makes (once) the venv
# benchmarks/.envs/NAME (gitignored) with PIP-ARGS installed, so no peer's dependencies change
# another's numbers; it sets $root (the repository) and $every_plugin, and prints nothing.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# agentkit the way the README installs it: core and every plugin under plugins/, editable.
every_plugin=(-e "$root")
for p in "$root"/plugins/*/; do
  if [ -f "$p/pyproject.toml" ]; then every_plugin+=(-e "${p%/}"); fi
done
bench_env() {
  local env="$root/benchmarks/.envs/$1"
  shift
  if [ ! -f "$env/.installed" ]; then
    python3 -m venv "$env"
    "$env/bin/python" -m pip install -q "$@"
    touch "$env/.installed"
  fi
}
