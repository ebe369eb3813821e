# Sourced by the A/B scripts (compare_builds.sh, compare_conv_builds.sh), from the repository
# root. ab_tree REV TARGET prints the tree holding revision REV with TARGET built in its
# build/release: a git worktree under build/ab/REV (made once, rebuilt incrementally), or this
# tree for REV "." (an A/A run).
ab_tree() {
  local rev=$1 target=$2 root=$PWD
  if [[ $rev == . ]]; then
    echo "$root"
    return
  fi
  # Named by commit, so a moving name (HEAD, a branch) never reuses a stale tree.
  rev=$(git rev-parse --short "$rev^{commit}")
  local tree=$root/build/ab/$rev
  if [[ ! -d $tree ]]; then
    mkdir -p "$root/build/ab"
    git worktree add --detach "$tree" "$rev" >/dev/null
  fi
  (cd "$tree" && cmake --preset release >/dev/null && cmake --build --preset release --target "$target" >/dev/null)
  echo "$tree"
}
