#!/bin/sh
# What the BPF controllers need to build: clang (the BPF target), bpftool (vmlinux.h from the
# kernel's BTF), libbpf's headers and library, and the kernel's BTF itself. Installs the
# packages with apt-get when run as root on Debian or Ubuntu; otherwise, or when something
# cannot be had, says what is missing and exits 1 (the caller skips the build: every BPF
# test then skips with the same reason).
missing() {
	m=""
	command -v clang >/dev/null 2>&1 || m="$m clang"
	command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || m="$m bpftool"
	[ -f /usr/include/bpf/libbpf.h ] || m="$m libbpf-dev"
	command -v cc >/dev/null 2>&1 || m="$m gcc"
	echo "$m"
}
skip() {
	echo "BPF controllers not built: $*" >&2
	exit 1
}
[ -r /sys/kernel/btf/vmlinux ] || skip "this kernel has no BTF (/sys/kernel/btf/vmlinux)"
need=$(missing)
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	skip "missing$need (install clang, bpftool and libbpf-dev, or run make as root on Debian/Ubuntu)"
fi
echo "installing the BPF toolchain:$need" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get install -y --no-install-recommends clang bpftool libbpf-dev gcc libc6-dev ||
	{ apt-get update && apt-get install -y --no-install-recommends clang bpftool libbpf-dev gcc libc6-dev; }; } >/dev/null ||
	skip "apt-get could not install clang, bpftool and libbpf-dev"
need=$(missing)
[ -z "$need" ] || skip "still missing$need after apt-get"
