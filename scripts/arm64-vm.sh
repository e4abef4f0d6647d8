#!/usr/bin/env bash
# An emulated arm64 Linux system with this tree's aarch64 build in it.
#
# Full-system emulation (qemu-system-aarch64 -M virt -cpu max): user-mode
# qemu hangs in any multi-threaded aarch64 program on these machines, so it
# cannot run yamba. The guest is Debian's arm64 cloud kernel booting an
# initramfs: busybox, glibc from the cross toolchain, the cross-built yamba
# and test binaries, and this tree's sources at the same absolute path as
# here (tests find their data through CARGO_MANIFEST_DIR, and the yamba
# binary through CARGO_BIN_EXE_yamba).
#
#   scripts/arm64-vm.sh shell              build, boot, and give a shell on the console
#                                          (leave with `exit` or Ctrl-D: the guest powers off)
#   scripts/arm64-vm.sh run CMDS OUT       build, boot, run the shell script CMDS in the guest,
#                                          and copy the guest's /out to the directory OUT;
#                                          exits with CMDS's status (124 when the guest hung)
#   scripts/arm64-vm.sh build [TESTLIST]   cross-build yamba, and the test binaries TESTLIST names
#                                          (see .ci/arm64-tests), without booting
#   scripts/arm64-vm.sh fetch              download the arm64 kernel, busybox and ministat
#                                          (once; needs `dpkg --add-architecture arm64`, see .ci/install)
#
# Environment: YAMBA_ARM64_DIR (downloaded packages, default
# /var/cache/yamba-arm64), YAMBA_ARM64_TESTS (a test list whose binaries
# the guest gets, for shell or run; default none), YAMBA_ARM64_TIMEOUT
# (seconds before a `run` guest counts as hung, default 1500),
# YAMBA_ARM64_SMP (2), YAMBA_ARM64_MEM (MiB, 2048).
#
# Output comes back over the serial console (what the guest prints) and a
# virtio console port the guest writes /out to as a tar stream (the cloud
# kernel has no 9p; virtio_console loads from the initramfs).
#
# In the guest: /out is copied back by `run`; `yamba-step NAME SECONDS CMD...`
# runs a step with a time limit, shows its output on the console, keeps it
# in /out/NAME.log and its exit status in /out/steps (124: timed out); the
# test binaries are listed in /yamba/tests (name, package directory, path).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=aarch64-unknown-linux-gnu
ASSETS=${YAMBA_ARM64_DIR:-/var/cache/yamba-arm64}
WORK=$ROOT/target/arm64-vm
# The cross build's own target directory: it never waits for the host
# build's lock (CI runs it beside the host's tests), and its profile
# (no debug info) would not share the host's build scripts anyway.
CROSS=$ROOT/target/cross
SYSROOT=/usr/aarch64-linux-gnu

say() { echo "arm64-vm: $*" >&2; }
die() { say "$*"; exit 1; }

# ---------------------------------------------------------------- fetch
fetch() {
  dpkg --print-foreign-architectures | grep -qx arm64 ||
    die "arm64 is not a dpkg architecture here: dpkg --add-architecture arm64 && apt-get update (.ci/install does it)"
  mkdir -p "$ASSETS"
  local meta kernel
  meta=linux-image-cloud-arm64:arm64
  kernel=$(apt-cache depends "$meta" | awk '/Depends: linux-image/{print $2; exit}')
  [ -n "$kernel" ] || die "cannot resolve $meta to a kernel package"
  local want=("$kernel" busybox-static:arm64 ministat:arm64)
  local stamp="$ASSETS/fetched"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${want[*]}" ] && [ -f "$ASSETS/vmlinuz" ]; then
    return 0
  fi
  say "downloading ${want[*]}"
  local dl
  dl=$(mktemp -d)
  (cd "$dl" && chmod 777 . && apt-get download -qq "${want[@]}")
  rm -rf "$ASSETS/k" "$ASSETS/bb" "$ASSETS/ms"
  dpkg-deb -x "$dl"/linux-image-*.deb "$ASSETS/k"
  dpkg-deb -x "$dl"/busybox-static_*.deb "$ASSETS/bb"
  dpkg-deb -x "$dl"/ministat_*.deb "$ASSETS/ms"
  rm -rf "$dl"
  cp "$ASSETS"/k/boot/vmlinuz-* "$ASSETS/vmlinuz"
  printf '%s' "${want[*]}" >"$stamp"
}

# ---------------------------------------------------------------- build
# The toolchain: rustup's aarch64 standard library when installed (the same
# rustc as the x86-64 build), else Debian's Rust with libstd-rust-dev:arm64.
# No debug info: the guest gets stripped binaries, and without it the cross
# build (from scratch in CI) is shorter. The dependencies (not yamba's own
# crates, whose code the guest checks) unoptimised, but for those the
# guest's tests spend their time in (HOT_DEPS, at opt-level 1): the guest
# checks code paths, not speed, and optimising the dependencies was most
# of the cross build. Everything at opt-level 0 (yamba's crates too) halved
# the build but made the guest's tests 4-25x slower.
# YAMBA_ARM64_DEPS_OPT=3 builds every dependency as a release does.
HOT_DEPS=(
  # the language's C parts compiled (tests jit, imports, c_only)
  cranelift-codegen cranelift-frontend cranelift-bforest cranelift-bitset cranelift-control
  cranelift-entity cranelift-codegen-shared regalloc2 hashbrown smallvec rustc-hash bumpalo
  # its aarch64 assembler and disassembler
  asm-rs yaxpeax-arm yaxpeax-arch
  # statistics, property tests and random cases (ministat, compare, fuzz)
  statrs approx num-traits libm proptest rand rand_chacha rand_core rand_xorshift ppv-lite86
  bit-set bit-vec
  # every results file written and read: JSON and its compression
  serde serde_core serde_json itoa memchr zmij zstd zstd-safe zstd-sys
  # the plots' PNG encoder (yamba-plot's tests)
  png fdeflate flate2 miniz_oxide crc32fast adler2 simd-adler32
  # the remote agent's message authentication (fs.remote.read's 4 MiB
  # passes: 52.6 s of the guest's smoke run with these unoptimised)
  sha2 hmac digest block-buffer crypto-common generic-array hybrid-array cpufeatures subtle
  typenum cmov ctutils const-oid
)
cross_cargo() {
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  export CARGO_PROFILE_RELEASE_DEBUG=0
  export CARGO_TARGET_DIR=$CROSS
  local deps=() d
  if [ -n "${YAMBA_ARM64_DEPS_OPT:-}" ]; then
    deps=(--config "profile.release.package.\"*\".opt-level=$YAMBA_ARM64_DEPS_OPT")
  else
    deps=(--config 'profile.release.package."*".opt-level=0')
    for d in "${HOT_DEPS[@]}"; do
      deps+=(--config "profile.release.package.$d.opt-level=1")
    done
  fi
  if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -qx $TARGET; then
    cargo "${deps[@]}" "$@"
  elif [ -d /usr/lib/rustlib/$TARGET ]; then
    RUSTC=/usr/bin/rustc /usr/bin/cargo "${deps[@]}" "$@"
  else
    die "no aarch64 Rust standard library: rustup target add $TARGET (or apt-get install libstd-rust-dev:arm64)"
  fi
}

# Builds yamba and the test binaries of TESTLIST; writes $WORK/tests
# (name, package directory, executable, arguments per line). All test
# binaries come from one cargo invocation, so features resolve once and
# nothing is compiled twice for another package selection.
build() {
  local list=${1:-}
  mkdir -p "$WORK"
  local t0=$SECONDS
  : >"$WORK/tests"
  rm -f "$WORK/artifacts.json"
  if [ -n "$list" ]; then
    local sel=() lines=() pkg what args lib=false
    local -A seen=()
    while read -r pkg what args; do
      case "$pkg" in '' | '#'*) continue ;; esac
      [ -n "${seen[$pkg]:-}" ] || sel+=(-p "$pkg")
      seen[$pkg]=1
      case "$what" in
        lib) lib=true ;;
        test:*) sel+=(--test "${what#test:}") ;;
        *) die "$list: '$what' is neither lib nor test:NAME" ;;
      esac
      lines+=("$pkg"$'\t'"$what"$'\t'"$args")
    done <"$list"
    $lib && sel+=(--lib)
    (cd "$ROOT" && cross_cargo test --release --target $TARGET --no-run "${sel[@]}" \
      --message-format=json-render-diagnostics) >"$WORK/artifacts.json"
    local meta
    meta=$(cd "$ROOT" && cargo metadata --no-deps --format-version 1)
    local line
    for line in "${lines[@]}"; do
      IFS=$'\t' read -r pkg what args <<<"$line"
      local dir kind target name
      dir=$(jq -r --arg p "$pkg" '.packages[] | select(.name == $p) | .manifest_path' <<<"$meta" | xargs dirname)
      case "$what" in
        lib) kind=lib; target=${pkg//-/_}; name=$pkg ;;
        test:*) kind=test; target=${what#test:}; name=$pkg-${what#test:} ;;
      esac
      local exe
      exe=$(jq -r --arg m "$dir/Cargo.toml" --arg k "$kind" --arg t "$target" '
        select(.reason == "compiler-artifact" and .executable != null and .profile.test
               and .manifest_path == $m and any(.target.kind[]; . == $k) and .target.name == $t)
        | .executable' "$WORK/artifacts.json" | tail -1)
      [ -n "$exe" ] || die "no test executable for '$pkg $what'"
      printf '%s\t%s\t%s\t%s\n' "$name" "$dir" "$exe" "$args" >>"$WORK/tests"
    done
    say "test binaries built in $((SECONDS - t0)) s"
  fi
  # yamba itself: the test build made it when a yamba-cli test is listed
  # (built once, with the features the tests use); else build it.
  local made=
  [ -s "$WORK/artifacts.json" ] && made=$(jq -r 'select(.reason == "compiler-artifact"
      and .target.name == "yamba" and .target.kind == ["bin"]) | .executable' "$WORK/artifacts.json")
  if [ -z "$made" ]; then
    (cd "$ROOT" && cross_cargo build --release --target $TARGET -p yamba-cli)
  fi
  say "built for $TARGET in $((SECONDS - t0)) s ($(wc -l <"$WORK/tests") test binaries)"
}

# ---------------------------------------------------------------- image
# The guest's /init: mounts, the virtio console for /out, then the mode
# given on the kernel command line.
write_init() {
  cat >"$1" <<'INIT'
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TERM=${TERM:-vt100}
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
ln -s /proc/self/fd /dev/fd; ln -s fd/0 /dev/stdin; ln -s fd/1 /dev/stdout; ln -s fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm && mount -t devpts pts /dev/pts && mount -t tmpfs shm /dev/shm
# The image holds the tree at its host path: a checkout under /tmp must not
# be hidden by a tmpfs (the initramfs root is writable memory already).
[ -n "$(ls -A /tmp)" ] || mount -t tmpfs -o size=75% tmp /tmp
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
hostname arm64-vm
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
# The virtio console carries /out back to the host (in this order: each
# needs the ones before it).
for m in virtio_ring virtio virtio_mmio virtio_console; do
  insmod /lib/modules/$m.ko || echo "arm64-vm: insmod $m failed"
done
mode=$(sed -n 's/.*yamba\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
mkdir -p /out
cd /tmp
echo "arm64-vm: up after $(cut -d' ' -f1 /proc/uptime) s: $(uname -srm), $(nproc) CPUs"
if [ "$mode" = shell ]; then
  echo "arm64-vm: yamba is /bin/yamba; test binaries are in /yamba/tests; exit powers off"
  setsid cttyhack sh -l
else
  sh /yamba/commands.sh
  echo "$?" >/out/exit
  echo "arm64-vm: commands done after $(cut -d' ' -f1 /proc/uptime) s"
  port=$(ls /dev/vport* 2>/dev/null | head -1)
  if [ -n "$port" ]; then
    tar -cf "$port" -C /out .
  else
    echo "arm64-vm: no virtio port for /out (virtio_console did not load)"
  fi
fi
sync
poweroff -f
INIT
}

# yamba-step NAME SECONDS CMD...: runs CMD with a time limit, its output on
# the console and in /out/NAME.log, its status in /out/steps. Steps may run
# side by side (each keeps its status in a file of its own); with
# YAMBA_STEP_QUIET=1 the console gets only the step's first and last line,
# so that side-by-side steps do not interleave their output there.
write_step() {
  cat >"$1" <<'STEP'
#!/bin/sh
name=$1; limit=$2; shift 2
echo "==> $name (limit ${limit} s): $*"
start=$(cut -d' ' -f1 /proc/uptime)
st=/tmp/.step-status-$name
rm -f "$st"
if [ "${YAMBA_STEP_QUIET:-0}" = 1 ]; then
  ( timeout -s KILL "$limit" "$@"; echo $? >"$st" ) >"/out/$name.log" 2>&1
else
  ( timeout -s KILL "$limit" "$@"; echo $? >"$st" ) 2>&1 | tee "/out/$name.log"
fi
status=$(cat "$st" 2>/dev/null || echo 125)
[ "$status" = 137 ] && status=124
end=$(cut -d' ' -f1 /proc/uptime)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "$name $status $secs" >>/out/steps
echo "<== $name: exit $status after $secs s"
exit "$status"
STEP
}

# Strips binary $2 into the image $1 at the same path.
copy_bin() {
  mkdir -p "$1$(dirname "$2")"
  aarch64-linux-gnu-strip -o "$1$2" "$2"
}

image() {
  local cmds=$1 mode=$2
  fetch
  local ir=$WORK/root
  rm -rf "$ir"
  mkdir -p "$ir"/{bin,sbin,usr/bin,usr/sbin,lib/modules,proc,sys,dev,tmp,root,etc,yamba}
  cp "$ASSETS/bb/bin/busybox" "$ir/bin/busybox"
  ln -s busybox "$ir/bin/sh"
  cp "$ASSETS/ms/usr/bin/ministat" "$ir/usr/bin/ministat"
  local kmods
  kmods=$(ls -d "$ASSETS"/k/lib/modules/*/kernel)
  for m in virtio/virtio virtio/virtio_ring virtio/virtio_mmio char/virtio_console; do
    cp "$kmods/drivers/$m.ko" "$ir/lib/modules/"
  done
  # glibc and libgcc from the cross toolchain, where the dynamic linker looks.
  mkdir -p "$ir/lib/aarch64-linux-gnu"
  cp -L "$SYSROOT/lib/ld-linux-aarch64.so.1" "$ir/lib/"
  for l in libc.so.6 libm.so.6 libgcc_s.so.1; do
    cp -L "$SYSROOT/lib/$l" "$ir/lib/aarch64-linux-gnu/"
  done
  echo "root:x:0:0:root:/root:/bin/sh" >"$ir/etc/passwd"
  echo "root:x:0:" >"$ir/etc/group"
  printf '127.0.0.1 localhost arm64-vm\n::1 localhost\n' >"$ir/etc/hosts"
  # The tree's sources at their host path (test data, schema), and the binaries.
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard) |
    sed -z "s|^|$ROOT/|" | xargs -0 cp --parents -t "$ir"
  local yamba=$CROSS/$TARGET/release/yamba
  [ -x "$yamba" ] || die "$yamba is missing: build first"
  copy_bin "$ir" "$yamba"
  ln -s "$yamba" "$ir/bin/yamba"
  local benchstat
  benchstat=$(ls "$HOME"/go/bin/linux_arm64/benchstat 2>/dev/null || true)
  [ -n "$benchstat" ] && cp "$benchstat" "$ir/usr/bin/benchstat"
  : >"$ir/yamba/tests"
  local name dir exe args
  while IFS=$'\t' read -r name dir exe args; do
    copy_bin "$ir" "$exe"
    printf '%s\t%s\t%s\t%s\n' "$name" "$dir" "$exe" "$args" >>"$ir/yamba/tests"
  done <"$WORK/tests"
  write_init "$ir/init"
  write_step "$ir/bin/yamba-step"
  chmod +x "$ir/init" "$ir/bin/yamba-step"
  if [ -n "$cmds" ]; then cp "$cmds" "$ir/yamba/commands.sh"; fi
  (cd "$ir" && find . | cpio -o -H newc --quiet) >"$WORK/initrd.cpio"
  say "image: $(du -m "$WORK/initrd.cpio" | cut -f1) MiB (mode $mode)"
}

# The qemu command line for mode $1, in QEMU_ARGS.
qemu_args() {
  command -v qemu-system-aarch64 >/dev/null ||
    die "qemu-system-aarch64 is missing: apt-get install -t bookworm-backports qemu-system-arm (.ci/install)"
  QEMU_ARGS=(qemu-system-aarch64 -M virt -cpu max -smp "${YAMBA_ARM64_SMP:-2}" -m "${YAMBA_ARM64_MEM:-2048}"
    -nographic -no-reboot -net none
    -kernel "$ASSETS/vmlinuz" -initrd "$WORK/initrd.cpio"
    -append "console=ttyAMA0 quiet panic=-1 yamba.mode=$1")
}

# ---------------------------------------------------------------- main
cmd=${1:-}
case "$cmd" in
  fetch) fetch ;;
  build) build "${2:-}" ;;
  shell)
    build "${YAMBA_ARM64_TESTS:-}"
    image "" shell
    qemu_args shell
    "${QEMU_ARGS[@]}"
    ;;
  run)
    [ $# -eq 3 ] || die "usage: $0 run CMDS OUT"
    cmds=$(realpath "$2")
    out=$3
    build "${YAMBA_ARM64_TESTS:-}"
    image "$cmds" ci
    rm -rf "$out" && mkdir -p "$out"
    out=$(realpath "$out")
    t0=$SECONDS
    status=0
    qemu_args ci
    timeout -s KILL "${YAMBA_ARM64_TIMEOUT:-1500}" "${QEMU_ARGS[@]}" -device virtio-serial-device \
      -chardev "file,id=out,path=$out/out.tar" -device virtserialport,chardev=out,name=out \
      </dev/null || status=$?
    say "guest ran for $((SECONDS - t0)) s"
    if [ "$status" -eq 137 ]; then
      say "the guest did not power off within ${YAMBA_ARM64_TIMEOUT:-1500} s: hung"
      exit 124
    fi
    [ -s "$out/out.tar" ] || die "the guest sent no /out (qemu status $status)"
    tar -xf "$out/out.tar" -C "$out" && rm "$out/out.tar"
    exit "$(cat "$out/exit" 2>/dev/null || echo 1)"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
