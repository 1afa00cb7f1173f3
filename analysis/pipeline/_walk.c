/* The build's two checks that grow with the corpus, in C (pipeline/native_walk.py): the stat
 * listing of a run folder that its input key is made from (cache._stat_stamp), and the sizes of
 * a run's recorded outputs (runner.outputs_intact). At 1,000 runs they stat ~110,000 inputs and
 * ~120,000 outputs on every build; in Python each costs several times the system call.
 *
 * The listing is byte for byte what native_walk.python_listing builds: for each regular file,
 * in os.walk's order with sorted names (a folder's files, then its subfolders),
 * "rel\0size\0mtime_ns\0ino\0".
 * Whatever Python might treat differently is left to it (LC_WALK_PYTHON): a symbolic link, an
 * entry that is neither a file nor a folder, a name that is not ASCII (Python sorts str, this
 * sorts bytes), a folder that cannot be read. Called through ctypes, which lets go of the
 * interpreter lock, so the build's threads walk runs on both cores. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LC_WALK_ABI 2
#define LC_WALK_PYTHON (-1)
#define REL_MAX 4096

long lc_walk_abi(void) { return LC_WALK_ABI; }

struct listing {
    char *buf;
    long cap;
    long len;   /* bytes the whole listing needs; written only while within cap */
};

static void put(struct listing *out, const char *text, long n) {
    if (out->len + n <= out->cap)
        memcpy(out->buf + out->len, text, (size_t)n);
    out->len += n;
}

struct names {
    char **items;
    size_t n, cap;
};

static int push(struct names *list, const char *name) {
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        char **items = realloc(list->items, cap * sizeof *items);
        if (!items) return -1;
        list->items = items;
        list->cap = cap;
    }
    if (!(list->items[list->n] = strdup(name))) return -1;
    list->n++;
    return 0;
}

static void drop(struct names *list) {
    for (size_t i = 0; i < list->n; i++) free(list->items[i]);
    free(list->items);
}

static int by_bytes(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ascii(const char *name) {
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p >= 0x80) return 0;
    return 1;
}

/* The listing of the folder open as `fd` (closed here), its entries named `rel` + name. */
static int walk(int fd, char *rel, size_t rel_len, struct listing *out) {
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return LC_WALK_PYTHON;
    }
    struct names files = {0}, folders = {0};
    int status = 0;
    struct dirent *entry;
    while (status == 0 && (entry = readdir(dir))) {
        const char *name = entry->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        unsigned char type = entry->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                status = LC_WALK_PYTHON;
                break;
            }
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        }
        if (!ascii(name) || (type != DT_DIR && type != DT_REG))
            status = LC_WALK_PYTHON;
        else if (push(type == DT_DIR ? &folders : &files, name) != 0)
            status = LC_WALK_PYTHON;
    }
    qsort(files.items, files.n, sizeof *files.items, by_bytes);
    qsort(folders.items, folders.n, sizeof *folders.items, by_bytes);
    char number[3 * 24];
    for (size_t i = 0; status == 0 && i < files.n; i++) {
        struct stat st;
        if (fstatat(dirfd(dir), files.items[i], &st, AT_SYMLINK_NOFOLLOW) != 0
                || !S_ISREG(st.st_mode)) {
            status = LC_WALK_PYTHON;    /* gone, or swapped for another kind since readdir */
            break;
        }
        put(out, rel, (long)rel_len);
        put(out, files.items[i], (long)strlen(files.items[i]) + 1);
        long long mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        int n = snprintf(number, sizeof number, "%lld%c%lld%c%llu", (long long)st.st_size, 0,
                         mtime_ns, 0, (unsigned long long)st.st_ino);
        put(out, number, n + 1);
    }
    for (size_t i = 0; status == 0 && i < folders.n; i++) {
        size_t len = strlen(folders.items[i]);
        if (rel_len + len + 2 > REL_MAX) {
            status = LC_WALK_PYTHON;
            break;
        }
        int sub = openat(dirfd(dir), folders.items[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (sub < 0) {
            status = LC_WALK_PYTHON;
            break;
        }
        memcpy(rel + rel_len, folders.items[i], len);
        rel[rel_len + len] = '/';
        status = walk(sub, rel, rel_len + len + 1, out);
    }
    rel[rel_len] = '\0';
    drop(&files);
    drop(&folders);
    closedir(dir);
    return status;
}

/* The listing of the run folder `root` into buf (cap bytes): its length (when more than cap,
 * call again with that room), or LC_WALK_PYTHON. */
long lc_walk_listing(const char *root, char *buf, long cap) {
    int fd = open(root, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return LC_WALK_PYTHON;
    char rel[REL_MAX + 1] = "";
    struct listing out = {buf, cap, 0};
    int status = walk(fd, rel, 0, &out);
    return status == 0 ? out.len : LC_WALK_PYTHON;
}

/* Whether each of the n files named in `rels` (each ending in '\0', under `root`, which ends
 * in '/') exists with its size in `sizes` (decimal, each ending in '\0'), following links as
 * os.stat does: 1 yes, 0 no. */
long lc_sizes_match(const char *root, const char *rels, const char *sizes, long n) {
    char path[2 * REL_MAX];
    size_t root_len = strlen(root);
    if (root_len >= sizeof path) return 0;
    memcpy(path, root, root_len);
    for (long i = 0; i < n; i++) {
        size_t len = strlen(rels);
        if (root_len + len >= sizeof path) return 0;
        memcpy(path + root_len, rels, len + 1);
        rels += len + 1;
        long long size = strtoll(sizes, NULL, 10);
        sizes += strlen(sizes) + 1;
        struct stat st;
        if (stat(path, &st) != 0 || (long long)st.st_size != size) return 0;
    }
    return 1;
}
