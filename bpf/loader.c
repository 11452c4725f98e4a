/* ecnlab-bpf: loads an ecnlab congestion controller (a BPF struct_ops object) under a name of
 * the caller's choosing, registers it through a BPF link and pins the link and the object's
 * counters under a directory of a BPF filesystem, then exits. The controller stays registered
 * exactly as long as the pinned link exists: removing the directory's files unregisters it
 * (the emulation does so when its run ends, and `ecnlab emulate --cleanup` for runs that were
 * killed).
 *
 *   ecnlab-bpf load OBJECT NAME PIN_DIR [NETNS:DEVICE ...] [port:N ...]
 *                                          register; prints {"name": ..., "pins": [...]}; an
 *                                          object's tc programs (SEC("tc"), named *_ingress and
 *                                          *_egress) are attached to DEVICE in each network
 *                                          namespace NETNS (a path such as /run/netns/x), where
 *                                          they stay until the device goes; each
 *                                          port:N enters listening port N in the
 *                                          object's map "ports" (which connections
 *                                          its tc programs take for the scheme's)
 *   ecnlab-bpf counters PIN_FILE           prints the pinned counters array as [n, n, ...]
 *
 * Written for Debian 12's libbpf 1.1, which registers struct_ops by a map update that would
 * outlive a killed process and knows no struct_ops links: the map is created with BPF_F_LINK
 * (so the update only stores the value) and the link is made with the bpf(2) call itself.
 * The controller's name is written into the object's .struct_ops data before libbpf opens
 * it (libbpf 1.1 offers no setter for a struct_ops map's initial value). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "counters.h"

/* include/uapi/linux/bpf.h of Linux 6.4 and later; Debian 12's headers predate them. */
#define ECNLAB_BPF_F_LINK (1U << 13)
#define ECNLAB_BPF_STRUCT_OPS 44
/* The name every controller object is built with (its .struct_ops data). */
#define BUILT_NAME_PREFIX "ecnlab_"
#define CA_NAME_MAX 16

static int fail(const char *what, int err)
{
	fprintf(stderr, "ecnlab-bpf: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc(n ? n : 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Renames the object's controller: finds the .struct_ops section of the ELF image and the
 * 16-byte name field in it that starts with BUILT_NAME_PREFIX. Returns 0, or -1 when the
 * image has no such section or name (or more than one name). */
static int rename_controller(char *img, size_t len, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh, *strs;
	char *hit = NULL;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > len || eh->e_shstrndx >= eh->e_shnum)
		return -1;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	strs = &sh[eh->e_shstrndx];
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *sname = img + strs->sh_offset + sh[i].sh_name;

		if (strcmp(sname, ".struct_ops") || sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		for (size_t off = 0; off + CA_NAME_MAX <= sh[i].sh_size; off++) {
			char *p = img + sh[i].sh_offset + off;

			if (!memcmp(p, BUILT_NAME_PREFIX, strlen(BUILT_NAME_PREFIX)) && memchr(p, 0, CA_NAME_MAX)) {
				if (hit)
					return -1;
				hit = p;
			}
		}
	}
	if (!hit)
		return -1;
	memset(hit, 0, CA_NAME_MAX);
	memcpy(hit, name, strlen(name));
	return 0;
}

static int pin_at(int fd, const char *dir, const char *file, FILE *out, int *first)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (bpf_obj_pin(fd, path))
		return -errno;
	fprintf(out, "%s\"%s\"", *first ? "" : ", ", path);
	*first = 0;
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* Attaches the object's tc programs to `dev` in the network namespace at `ns_path`. */
static int attach_tc(struct bpf_object *obj, const char *ns_path, const char *dev)
{
	int here = open("/proc/self/ns/net", O_RDONLY), there = open(ns_path, O_RDONLY), err = 0;
	struct bpf_program *prog;

	if (here < 0 || there < 0)
		return fail(ns_path, errno);
	if (setns(there, CLONE_NEWNET))
		return fail("entering the host's namespace", errno);
	bpf_object__for_each_program(prog, obj) {
		const char *pname = bpf_program__name(prog);
		int ingress = ends_with(pname, "_ingress");
		LIBBPF_OPTS(bpf_tc_hook, hook);
		LIBBPF_OPTS(bpf_tc_opts, opts);

		if (bpf_program__type(prog) != BPF_PROG_TYPE_SCHED_CLS || (!ingress && !ends_with(pname, "_egress")))
			continue;
		hook.ifindex = if_nametoindex(dev);
		if (!hook.ifindex) {
			err = fail(dev, errno);
			break;
		}
		hook.attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST) {
			err = fail("making the device's clsact hook", err);
			break;
		}
		opts.prog_fd = bpf_program__fd(prog);
		err = bpf_tc_attach(&hook, &opts);
		if (err) {
			err = fail("attaching a tc program", err);
			break;
		}
	}
	if (setns(here, CLONE_NEWNET))
		return fail("leaving the host's namespace", errno);
	close(here);
	close(there);
	return err;
}

static int load(const char *obj_path, const char *name, const char *dir, int nhosts, char **hosts)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_object *obj;
	struct bpf_map *map;
	size_t len;
	char *img;
	int err, first = 1;

	if (strlen(name) >= CA_NAME_MAX || !*name)
		return fail("the name must have 1 to 15 characters", EINVAL);
	img = read_file(obj_path, &len);
	if (!img)
		return fail(obj_path, errno);
	if (rename_controller(img, len, name))
		return fail("the object has no single controller named " BUILT_NAME_PREFIX "*", EINVAL);
	obj = bpf_object__open_mem(img, len, &opts);
	if (!obj)
		return fail("opening the object", errno);
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			bpf_map__set_map_flags(map, bpf_map__map_flags(map) | ECNLAB_BPF_F_LINK);
	}
	err = bpf_object__load(obj);
	if (err)
		return fail("loading the object (the verifier's log is above)", err);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return fail(dir, errno);
	printf("{\"name\": \"%s\", \"pins\": [", name);
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS) {
			union bpf_attr attr;
			struct bpf_link *stored;
			int link;

			/* Stores the value with the programs' descriptors; with BPF_F_LINK the
			 * kernel registers nothing until the link below. */
			stored = bpf_map__attach_struct_ops(map);
			if (!stored)
				return fail("storing the struct_ops value", errno);
			memset(&attr, 0, sizeof(attr));
			/* map_fd in newer headers: the same field as prog_fd. */
			attr.link_create.prog_fd = bpf_map__fd(map);
			attr.link_create.attach_type = ECNLAB_BPF_STRUCT_OPS;
			link = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
			if (link < 0)
				return fail("registering the controller (BPF link)", errno);
			err = pin_at(link, dir, "link", stdout, &first);
			if (err)
				return fail("pinning the link", err);
		} else if (!strcmp(bpf_map__name(map), "counters")) {
			err = pin_at(bpf_map__fd(map), dir, "counters", stdout, &first);
			if (err)
				return fail("pinning the counters", err);
		}
	}
	printf("]}\n");
	for (int i = 0; i < nhosts; i++) {
		char *sep = strrchr(hosts[i], ':');

		if (!strncmp(hosts[i], "port:", 5)) {
			/* A listening port of the scheme's connections, for its tc programs. */
			struct bpf_map *ports = bpf_object__find_map_by_name(obj, "ports");
			__u16 port = htons((__u16)atoi(hosts[i] + 5));
			__u8 one = 1;

			if (!ports || bpf_map_update_elem(bpf_map__fd(ports), &port, &one, BPF_ANY))
				return fail("the object has no ports map to note a port in", errno ? errno : EINVAL);
			continue;
		}

		if (!sep)
			return fail("expected NETNS:DEVICE", EINVAL);
		*sep = 0;
		if (attach_tc(obj, hosts[i], sep + 1))
			return 1;
	}
	return 0;
}

static int counters(const char *pin)
{
	int fd = bpf_obj_get(pin);

	if (fd < 0)
		return fail(pin, errno);
	printf("[");
	for (__u32 i = 0; i < ECNLAB_COUNTERS; i++) {
		__u64 v = 0;

		if (bpf_map_lookup_elem(fd, &i, &v))
			return fail("reading the counters", errno);
		printf("%s%llu", i ? ", " : "", (unsigned long long)v);
	}
	printf("]\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "load"))
		return load(argv[2], argv[3], argv[4], argc - 5, argv + 5);
	if (argc == 3 && !strcmp(argv[1], "counters"))
		return counters(argv[2]);
	fprintf(stderr, "usage: ecnlab-bpf load OBJECT NAME PIN_DIR [NETNS:DEVICE ...] [port:N ...] | ecnlab-bpf counters PIN_FILE\n");
	return 2;
}
