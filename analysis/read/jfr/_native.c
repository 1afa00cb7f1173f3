/* The JFR reader's costliest loop, compiled (see native.py, which builds and loads this file,
 * and falls back to the pure-Python reader when it cannot):
 *
 *   lc_jfr_checkpoints  walk a chunk's events as reader.ChunkReader.read does and step through
 *                       every constant-pool checkpoint in it, entry by entry, with the types of
 *                       the chunk's metadata; for the pools the summary resolves, hand back each
 *                       entry's key, the offset of its value and the values of the fields the
 *                       summary takes from it ("captures": a method's class and name keys, a
 *                       stack trace's frames' methods, where a string starts), which the reader
 *                       turns into its entry only if an event refers to it; and on the way,
 *                       list the values of the events whose wanted fields are all integers
 *                       or strings (thread parks, allocation and execution samples, GC,
 *                       settings ...), which the reader hands to its handlers without decoding
 *                       them (a string as its offset: decoded only if the summary uses it);
 *                       and list where the events the reader must see start (the checkpoints
 *                       left to it and the types it reads, but a setting of a type no summary
 *                       reports), so that the Python loop never meets the others:
 *                       a recording's GC phase events, millions in a profile recording, are
 *                       stepped over here by their size prefix alone.
 *   lc_jfr_method_names name, once a chunk, every method the walk indexed ("pkg.Class.method",
 *                       from the Method, Class, Symbol and String pools' captures), so that
 *                       Python receives names, not pool entries (names.py).
 *   lc_jfr_tally        sum a chunk's listed parks by stack trace key (~10k parks a run of
 *                       the bundled runs, each a Python tuple and dict update before).
 *
 * No Python headers: buffers arrive as pointers (ctypes). Nothing here judges damage: every
 * read is checked against the checkpoint's (or event's) end, and a checkpoint with anything the
 * Python reader could refuse or word differently (a value past its end, an unknown type, a
 * string encoding or length out of range, an array longer than the bytes left) is marked
 * deferred and read again by the Python code, whose warning stands; an event so is not listed.
 * So a checkpoint passed here is one the Python reader reads without an error, and the entries
 * it gives are the ones it would keep; a listed event's values are the ones it would decode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LC_JFR_ABI 13
#define HEADER_SIZE 68
#define CHECKPOINT_TYPE 1
#define MAX_STRING_BYTES (1 << 20)   /* wire.MAX_STRING_BYTES */
#define MAX_DEPTH 64                 /* the program's structs nest less (native.py) */

/* Field kinds of the program (native.py: KIND_*); bit 4 marks an array, bit 5 a field whose
 * value is captured (a byte or varint: its value; a string: its offset; an array: its length,
 * then its items' captures), bits 8.. a struct's class index. */
enum { K_BYTE = 1, K_VARINT = 2, K_FLOAT = 3, K_DOUBLE = 4, K_STRING = 5, K_STRUCT = 6 };
#define K_ARRAY 16
#define K_CAPTURE 32
#define K_CONV_SHIFT 6            /* bits 6-7: how an event's captured varint is read */
enum { K_CONV_RAW = 0, K_CONV_LONG = 1, K_CONV_INT = 2, K_CONV_SHORT = 3 };
#define EVENT_VALUES 4            /* the most fields the reader wants of an event it lists */
#define DIRECT_TYPES 1024         /* type ids below this are looked up in a table, not searched */

enum { CP_READ = 0, CP_DEFERRED = 1 };

int64_t lc_jfr_abi(void) { return LC_JFR_ABI; }

typedef struct {
    const uint8_t *d;
    int64_t end;                 /* the checkpoint's end: nothing at or past it is read */
    const int64_t *cls_ops;      /* class c's fields are ops[cls_ops[c] .. cls_ops[c + 1]) */
    const int64_t *ops;
    int64_t n_classes;
    uint64_t *caps;              /* captured values: while walking a kept entry, else NULL */
    int64_t n_caps, cap_caps;    /* (counted past cap_caps, written below it) */
} Walk;

static inline void capture(Walk *w, int64_t op, uint64_t value)
{
    if (!(op & K_CAPTURE) || !w->caps)
        return;
    if (w->n_caps < w->cap_caps)
        w->caps[w->n_caps] = value;
    w->n_caps += 1;
}

/* An unsigned LEB128 as wire.read_varint reads it (at most 9 bytes, the 9th of 8 bits). */
static inline int varint(const Walk *w, int64_t *pos, uint64_t *out)
{
    int64_t p = *pos;
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) {
        if (p >= w->end)
            return -1;
        uint8_t b = w->d[p++];
        r |= (uint64_t)(b & 0x7F) << (7 * i);
        if (b < 0x80) {
            *pos = p;
            *out = r;
            return 0;
        }
    }
    if (p >= w->end)
        return -1;
    r |= (uint64_t)w->d[p++] << 56;
    *pos = p;
    *out = r;
    return 0;
}

/* varint() without its value: where it ends, -1 where it would fail. */
static inline int skip_varint(const Walk *w, int64_t *pos)
{
    int64_t p = *pos;
    for (int i = 0; i < 8; i++) {
        if (p >= w->end)
            return -1;
        if (w->d[p++] < 0x80) {
            *pos = p;
            return 0;
        }
    }
    if (p >= w->end)
        return -1;
    *pos = p + 1;
    return 0;
}

/* wire.skip_string: encodings 0-5; a char array (4) is n varints (all one byte when ASCII). */
static int skip_string(const Walk *w, int64_t *pos)
{
    uint64_t n, v;
    if (*pos >= w->end)
        return -1;
    uint8_t encoding = w->d[(*pos)++];
    switch (encoding) {
    case 0: case 1:
        return 0;
    case 2:
        return varint(w, pos, &n);
    case 3: case 4: case 5:
        if (varint(w, pos, &n) || n > MAX_STRING_BYTES || n > (uint64_t)(w->end - *pos))
            return -1;
        if (encoding != 4) {
            *pos += (int64_t)n;
            return 0;
        }
        for (uint64_t i = 0; i < n; i++)
            if (varint(w, pos, &v))
                return -1;
        return 0;
    default:
        return -1;
    }
}

static int skip_class(Walk *w, int64_t c, int64_t *pos, int depth);

static int skip_value(Walk *w, int64_t op, int64_t *pos, int depth)
{
    uint64_t v;
    switch (op & 15) {
    case K_BYTE:
        if (*pos >= w->end)
            return -1;
        capture(w, op, w->d[*pos]);
        *pos += 1;
        return 0;
    case K_VARINT:
        if (varint(w, pos, &v))
            return -1;
        capture(w, op, v);
        return 0;
    case K_FLOAT:
        if (w->end - *pos < 4)
            return -1;
        *pos += 4;
        return 0;
    case K_DOUBLE:
        if (w->end - *pos < 8)
            return -1;
        *pos += 8;
        return 0;
    case K_STRING:
        capture(w, op, (uint64_t)*pos);
        return skip_string(w, pos);
    case K_STRUCT:
        return skip_class(w, op >> 8, pos, depth + 1);
    default:
        return -1;
    }
}

static int skip_field(Walk *w, int64_t op, int64_t *pos, int depth)
{
    if (op & K_ARRAY) {
        uint64_t n;
        /* every item takes a byte or more (native.py refuses arrays of empty structs) */
        if (varint(w, pos, &n) || n > (uint64_t)(w->end - *pos))
            return -1;
        capture(w, op, n);
        for (uint64_t k = 0; k < n; k++)
            if (skip_value(w, op, pos, depth))
                return -1;
        return 0;
    }
    return skip_value(w, op, pos, depth);
}

static int skip_class(Walk *w, int64_t c, int64_t *pos, int depth)
{
    if (c < 0 || c >= w->n_classes || depth > MAX_DEPTH)
        return -1;
    for (int64_t i = w->cls_ops[c]; i < w->cls_ops[c + 1]; i++) {
        int64_t op = w->ops[i];
        /* A field neither captured nor an array, a varint or a byte (most of a pool entry's
         * and a stack frame's fields), is stepped over here, not through two calls each. */
        if (op == K_VARINT) {
            if (skip_varint(w, pos))
                return -1;
        } else if (op == K_BYTE) {
            if (*pos >= w->end)
                return -1;
            *pos += 1;
        } else if (skip_field(w, op, pos, depth))
            return -1;
    }
    return 0;
}

/* An event's fields as the reader's partial decoder reads them: class c is the event's fields
 * up to the last one wanted, the wanted ones marked captured, each a byte or a varint turned
 * into the Java type's value (K_CONV_*: a long, int or short is signed; others as they are),
 * a float or a double (big-endian): the bits of its value as a C double (a float widened, as
 * Python's struct does), or a string: its offset (the reader decodes it if it needs it).
 * Writes them to vals[] in field order; -1 (left to the Python decoder) for anything else, or
 * a value the Python decoder would give as an integer of 2^63 or more. */
static int event_values(Walk *w, int64_t c, int64_t p, int64_t *vals, int64_t n_vals)
{
    int64_t n = 0;
    if (c < 0 || c >= w->n_classes)
        return -1;
    for (int64_t i = w->cls_ops[c]; i < w->cls_ops[c + 1]; i++) {
        int64_t op = w->ops[i];
        uint64_t v;
        if (!(op & K_CAPTURE)) {
            if (skip_field(w, op, &p, 0))
                return -1;
            continue;
        }
        if (n >= n_vals || (op & K_ARRAY))
            return -1;
        if ((op & 15) == K_STRING) {
            vals[n++] = p;
            if (skip_string(w, &p))
                return -1;
            continue;
        }
        if ((op & 15) == K_FLOAT || (op & 15) == K_DOUBLE) {
            int64_t width = (op & 15) == K_FLOAT ? 4 : 8;
            if (p > w->end - width)
                return -1;
            uint64_t bits = 0;
            for (int64_t b = 0; b < width; b++)
                bits = bits << 8 | w->d[p + b];
            p += width;
            double value;
            if (width == 4) {
                uint32_t narrow = (uint32_t)bits;
                float f;
                memcpy(&f, &narrow, sizeof f);
                value = f;
            } else {
                memcpy(&value, &bits, sizeof value);
            }
            memcpy(&vals[n++], &value, sizeof value);
            continue;
        }
        if ((op & 15) == K_BYTE) {
            if (p >= w->end)
                return -1;
            v = w->d[p++];
        } else if ((op & 15) != K_VARINT || varint(w, &p, &v)) {
            return -1;
        }
        switch ((op >> K_CONV_SHIFT) & 3) {
        case K_CONV_LONG:
            vals[n++] = (int64_t)v;
            break;
        case K_CONV_INT:
            vals[n++] = (int32_t)(uint32_t)v;
            break;
        case K_CONV_SHORT:
            vals[n++] = (int16_t)(uint16_t)v;
            break;
        default:
            if (v >> 63)
                return -1;
            vals[n++] = (int64_t)v;
        }
    }
    return n == n_vals ? 0 : -1;
}

/* The class index of a pool's type id: type_ids[] is sorted ascending, type_cls[] gives the
 * class index, -1 for a type whose shape is left to the Python reader. */
static int64_t search(const uint64_t *type_ids, int64_t n, uint64_t type_id)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (type_ids[mid] < type_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && type_ids[lo] == type_id ? lo : -1;
}

static int64_t find_class(const uint64_t *type_ids, const int64_t *type_cls, int64_t n,
                          uint64_t type_id)
{
    int64_t i = search(type_ids, n, type_id);
    return i >= 0 ? type_cls[i] : -1;
}

/* One checkpoint's payload, [p, end), as ChunkReader._checkpoint reads it. Returns 0 and
 * appends the kept pools' groups, or -1 (the caller drops what was appended). */
static int checkpoint(Walk *w, int64_t p, const uint64_t *type_ids, const int64_t *type_cls,
                      int64_t n_types, const int64_t *cls_prefix, const int64_t *cls_slot,
                      int64_t *n_groups, int64_t cap_groups, int64_t *g_slot, int64_t *g_end,
                      int64_t *n_entries, int64_t cap_entries, uint64_t *e_key, int64_t *e_off,
                      int64_t *e_caps, uint64_t *caps)
{
    uint64_t v, pool_count;
    for (int i = 0; i < 3; i++)        /* start time, duration, delta to the previous one */
        if (varint(w, &p, &v))
            return -1;
    if (p >= w->end)                   /* the checkpoint's kind flags */
        return -1;
    p += 1;
    if (varint(w, &p, &pool_count) || pool_count > (uint64_t)(w->end - p))
        return -1;
    for (uint64_t k = 0; k < pool_count; k++) {
        uint64_t type_id, count;
        if (varint(w, &p, &type_id) || varint(w, &p, &count) || count > (uint64_t)(w->end - p))
            return -1;
        int64_t c = find_class(type_ids, type_cls, n_types, type_id);
        if (c < 0 || c >= w->n_classes)
            return -1;
        int64_t slot = cls_slot[c], prefix = cls_prefix[c];
        for (uint64_t e = 0; e < count; e++) {
            uint64_t key;
            if (varint(w, &p, &key))
                return -1;
            int64_t at = p;
            w->caps = slot >= 0 ? caps : 0;
            /* a pool of a primitive type (java.lang.String): the value, then any fields */
            if (prefix && skip_value(w, prefix, &p, 0))
                return -1;
            if (skip_class(w, c, &p, 0))
                return -1;
            if (slot >= 0) {
                if (*n_entries < cap_entries) {
                    e_key[*n_entries] = key;
                    e_off[*n_entries] = at;
                    e_caps[*n_entries] = w->n_caps;
                }
                *n_entries += 1;
            }
        }
        if (slot >= 0) {
            if (*n_groups < cap_groups) {
                g_slot[*n_groups] = slot;
                g_end[*n_groups] = *n_entries;
            }
            *n_groups += 1;
        }
    }
    return 0;
}

/* Walk the events of a chunk (data[0 .. len), header included) from its first as
 * ChunkReader.read does, stopping where it stops (an event header cut short, a size below 2 or
 * past the data), read every checkpoint event and list the events of the types ev_type_ids
 * (sorted; ev_type_cls: the class of the fields wanted, marked captured; ev_type_n: how many):
 * event i of them is ev_pos[i], the offset of its payload, and ev_vals[4 i ..] the values.
 * For checkpoint i:
 *   cp_pos[i]     the offset of its payload (after size and type id), the reader's `p`
 *   cp_status[i]  CP_READ, or CP_DEFERRED: left to the Python reader (nothing kept from it)
 *   cp_groups[i]  the end of its groups: groups cp_groups[i - 1] (0 for the first) ..
 *                 cp_groups[i]
 * Group j is one kept pool of a checkpoint: g_slot[j] its slot (which pool, numbered by the
 * caller), g_end[j] the end of its entries, which start at g_end[j - 1] (0 for the first);
 * entry e is e_key[e] and e_off[e], the offset of its value; its captures are caps[e_caps[e - 1]
 * (0 for the first) .. e_caps[e]).
 * The program: cls_ops, ops, cls_prefix (the kind of a primitive pool type's value, else 0),
 * cls_slot (-1 for pools not kept) per class index; type_ids (sorted) -> type_cls.
 * An event of a type whose ev_type_batch is not 0 is, when listed, not in ev_pos/ev_vals
 * but in b_sorted: grouped by type, type t's (its index in ev_type_ids) b_sorted[EVENT_VALUES
 * b_ends[t - 1] (0 for the first) .. EVENT_VALUES b_ends[t]), in the order they came; b_kind
 * and b_vals are the walk's room for them (*n_batched_out of them; cap_events each).
 * An event of a type whose ev_type_keep[t] is a value's index i (else -1) is, when its values
 * are listed and value i is not among keep_vals[keep_ends[t - 1] (0 for the first) ..
 * keep_ends[t]) (its bits as uint64_t, sorted so), dropped: neither listed nor visited (a setting of an event type no
 * summary reports: its handler would do nothing with it).
 * Every checkpoint left to the Python reader and every event of the types visit_ids (sorted)
 * but those batched or dropped is listed in visit_pos[]
 * (where its size prefix starts), *n_visits_out of them; *stop_out is where the walk stopped:
 * len, or the event whose header is cut short or whose size is below 2 or past the data (the
 * reader reads that one's header again and words the damage).
 * Returns the number of checkpoints, and *n_groups_out, *n_entries_out, *n_caps_out their
 * groups, entries and captures, *n_events_out the events listed; when any count exceeds its
 * capacity only the counts are right (call again with room for them). Returns -1 when the
 * arguments are inconsistent. */
int64_t lc_jfr_checkpoints(const uint8_t *data, int64_t len,
                           const int64_t *cls_ops, const int64_t *ops, const int64_t *cls_prefix,
                           const int64_t *cls_slot, int64_t n_classes,
                           const uint64_t *type_ids, const int64_t *type_cls, int64_t n_types,
                           int64_t cap_cps, int64_t *cp_pos, int64_t *cp_status,
                           int64_t *cp_groups,
                           int64_t cap_groups, int64_t *g_slot, int64_t *g_end,
                           int64_t cap_entries, uint64_t *e_key, int64_t *e_off,
                           int64_t *e_caps, int64_t cap_caps, uint64_t *caps,
                           const uint64_t *ev_type_ids, const int64_t *ev_type_cls,
                           const int64_t *ev_type_n, const int64_t *ev_type_batch,
                           const int64_t *ev_type_keep, const int64_t *keep_ends,
                           const uint64_t *keep_vals, int64_t n_ev_types,
                           int64_t cap_events, int64_t *ev_pos, int64_t *ev_vals,
                           int64_t *b_kind, int64_t *b_vals, int64_t *b_sorted, int64_t *b_ends,
                           const uint64_t *visit_ids, int64_t n_visit_ids,
                           int64_t cap_visits, int64_t *visit_pos, int64_t *n_visits_out,
                           int64_t *stop_out, int64_t *n_batched_out,
                           int64_t *n_groups_out, int64_t *n_entries_out, int64_t *n_caps_out,
                           int64_t *n_events_out)
{
    if (len < 0 || n_classes < 0 || n_types < 0 || cap_cps < 0 || cap_groups < 0 ||
        cap_entries < 0 || cap_caps < 0 || n_ev_types < 0 || cap_events < 0 ||
        n_visit_ids < 0 || cap_visits < 0 || cls_ops[0] != 0)
        return -1;
    for (int64_t c = 0; c < n_classes; c++)
        if (cls_ops[c + 1] < cls_ops[c])
            return -1;
    for (int64_t t = 0; t < n_ev_types; t++)
        if (keep_ends[t] < (t ? keep_ends[t - 1] : 0) || ev_type_keep[t] >= EVENT_VALUES)
            return -1;
    int64_t n_cps = 0, n_groups = 0, n_entries = 0, pos = HEADER_SIZE;
    int64_t n_caps = 0, n_events = 0, n_visits = 0, n_batched = 0;
    Walk all = {data, len, cls_ops, ops, n_classes, 0, 0, 0};
    /* Each event's type is looked up twice (listed? visited?): JDKs number their types below
     * DIRECT_TYPES, so a table each instead of two binary searches per event. */
    int32_t ev_index[DIRECT_TYPES];
    uint8_t visited[DIRECT_TYPES];
    for (int64_t i = 0; i < DIRECT_TYPES; i++) {
        ev_index[i] = -1;
        visited[i] = 0;
    }
    for (int64_t t = 0; t < n_ev_types; t++)
        if (ev_type_ids[t] < DIRECT_TYPES && search(ev_type_ids, n_ev_types, ev_type_ids[t]) == t)
            ev_index[ev_type_ids[t]] = (int32_t)t;
    for (int64_t i = 0; i < n_visit_ids; i++)
        if (visit_ids[i] < DIRECT_TYPES)
            visited[visit_ids[i]] = 1;
    while (pos < len) {
        uint64_t size, type_id;
        int64_t p = pos;
        if (varint(&all, &p, &size) || p >= len)
            break;
        if (size < 2 || size > (uint64_t)(len - pos))
            break;
        int64_t next = pos + (int64_t)size;
        if (data[p] < 128) {
            type_id = data[p];
            p += 1;
        } else if (varint(&all, &p, &type_id)) {
            pos = next;
            continue;
        }
        int batched = 0, dropped = 0;
        if (type_id != CHECKPOINT_TYPE && n_ev_types) {
            int64_t t = type_id < DIRECT_TYPES ? ev_index[type_id]
                                               : search(ev_type_ids, n_ev_types, type_id);
            int64_t k = t >= 0 ? ev_type_n[t] : -1;
            int64_t vals[EVENT_VALUES];
            Walk w = {data, next, cls_ops, ops, n_classes, 0, 0, 0};
            if (k >= 0 && k <= EVENT_VALUES && !event_values(&w, ev_type_cls[t], p, vals, k)) {
                int64_t keep = ev_type_keep[t];
                if (keep >= 0 && keep < k) {
                    int64_t first = t ? keep_ends[t - 1] : 0;
                    dropped = search(keep_vals + first, keep_ends[t] - first,
                                     (uint64_t)vals[keep]) < 0;
                }
            } else {
                k = -1;     /* not listed: the Python reader decodes it */
            }
            if (k >= 0 && !dropped) {
                /* a batched type's events go to their own list, by type (below) */
                batched = ev_type_batch[t] != 0;
                int64_t *to = batched ? b_vals : ev_vals, *count = batched ? &n_batched
                                                                             : &n_events;
                if (*count < cap_events) {
                    if (batched)
                        b_kind[*count] = t;
                    else
                        ev_pos[*count] = p;
                    for (int64_t i = 0; i < EVENT_VALUES; i++)
                        to[*count * EVENT_VALUES + i] = i < k ? vals[i] : 0;
                }
                *count += 1;
            }
        }
        if (!batched && !dropped && type_id != CHECKPOINT_TYPE &&
            (type_id < DIRECT_TYPES ? visited[type_id]
                                    : search(visit_ids, n_visit_ids, type_id) >= 0)) {
            if (n_visits < cap_visits)
                visit_pos[n_visits] = pos;
            n_visits += 1;
        }
        if (type_id == CHECKPOINT_TYPE) {
            Walk w = {data, next, cls_ops, ops, n_classes, 0, n_caps, cap_caps};
            int64_t groups_before = n_groups, entries_before = n_entries;
            int status = checkpoint(&w, p, type_ids, type_cls, n_types, cls_prefix, cls_slot,
                                    &n_groups, cap_groups, g_slot, g_end,
                                    &n_entries, cap_entries, e_key, e_off,
                                    e_caps, caps) ? CP_DEFERRED : CP_READ;
            if (status == CP_READ)
                n_caps = w.n_caps;
            else {
                n_groups = groups_before;
                n_entries = entries_before;
                /* only a checkpoint the Python reader reads is visited */
                if (n_visits < cap_visits)
                    visit_pos[n_visits] = pos;
                n_visits += 1;
            }
            if (n_cps < cap_cps) {
                cp_pos[n_cps] = p;
                cp_status[n_cps] = status;
                cp_groups[n_cps] = n_groups;
            }
            n_cps += 1;
        }
        pos = next;
    }
    /* The batched events by type, each type's in their order: b_sorted[b_ends[t - 1] ..
     * b_ends[t]) (counting sort; EVENT_VALUES values each). */
    for (int64_t t = 0; t < n_ev_types; t++)
        b_ends[t] = 0;
    if (n_batched <= cap_events) {
        for (int64_t i = 0; i < n_batched; i++)
            b_ends[b_kind[i]] += 1;
        for (int64_t t = 0, at = 0; t < n_ev_types; t++) {
            int64_t n = b_ends[t];
            b_ends[t] = at;            /* for now: where type t's next event goes */
            at += n;
        }
        for (int64_t i = 0; i < n_batched; i++) {
            int64_t to = b_ends[b_kind[i]]++;
            for (int64_t j = 0; j < EVENT_VALUES; j++)
                b_sorted[to * EVENT_VALUES + j] = b_vals[i * EVENT_VALUES + j];
        }
    }
    *n_batched_out = n_batched;
    *stop_out = pos < len ? pos : len;
    *n_visits_out = n_visits;
    *n_groups_out = n_groups;
    *n_entries_out = n_entries;
    *n_caps_out = n_caps;
    *n_events_out = n_events;
    return n_cps;
}

/* ---- Naming a chunk's methods (lc_jfr_method_names) ------------------------------------------
 * names.stack_names's method_name, for every method entry the walk indexed: its class's name
 * symbol and its name symbol resolved through the chunk's Class, Symbol and String pools, read
 * as wire.read_string reads them and joined as summary.method_label joins them. A name whose
 * text Python's decoders would make otherwise than by copying code points (UTF-8 that is not
 * strictly valid, as Java's modified UTF-8 of a NUL or a supplementary character; a char array
 * with a surrogate; a NUL, the separator here) or that an unexpected shape makes unsure is not
 * given: the Python code names it, as without this function. */

#define ABSENT 0        /* a text that is None or "": the label's placeholder */
#define WRITTEN 1
#define DEFER (-1)

typedef struct {            /* key -> entry index, open addressing (slot: entry + 1, 0 empty) */
    int64_t *slots;
    uint64_t mask;
    int shift;
} Index;

typedef struct {
    const uint8_t *d;
    int64_t len;
    const uint64_t *e_key;
    const int64_t *e_caps;
    const uint64_t *caps;
    int64_t n_entries, n_caps;
    Index methods, classes, symbols, strings;
    int64_t *memo;              /* per class entry: where its name is in out (+ 1), its length */
    uint8_t *out;
    int64_t n_out, cap_out;
} Namer;

static inline uint64_t slot_of(const Index *ix, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> ix->shift;
}

/* The index by key of the entries of the runs ranges[0 .. 2 n): entries ranges[2 i] up to
 * ranges[2 i + 1], run after run (a later entry of a key wins, as in a dict). -1 when a run
 * is out of range or memory is short. */
static int index_build(Index *ix, const Namer *nm, const int64_t *ranges, int64_t n)
{
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ranges[2 * i], b = ranges[2 * i + 1];
        if (a < 0 || b < a || b > nm->n_entries)
            return -1;
        total += b - a;
    }
    int bits = 3;
    while (bits < 62 && ((int64_t)1 << bits) < 2 * total)
        bits++;
    ix->mask = ((uint64_t)1 << bits) - 1;
    ix->shift = 64 - bits;
    ix->slots = calloc((size_t)1 << bits, sizeof(int64_t));
    if (!ix->slots)
        return -1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = ranges[2 * i]; e < ranges[2 * i + 1]; e++) {
            uint64_t key = nm->e_key[e], h = slot_of(ix, key);
            while (ix->slots[h] && nm->e_key[ix->slots[h] - 1] != key)
                h = (h + 1) & ix->mask;
            ix->slots[h] = e + 1;
        }
    return 0;
}

static int64_t index_get(const Index *ix, const Namer *nm, uint64_t key)
{
    uint64_t h = slot_of(ix, key);
    while (ix->slots[h]) {
        if (nm->e_key[ix->slots[h] - 1] == key)
            return ix->slots[h] - 1;
        h = (h + 1) & ix->mask;
    }
    return -1;
}

/* The first capture of entry e (pool_lookup's one_key, one_string, two_keys read the first
 * one or two), or -1 when it has fewer than `need`. */
static int64_t first_capture(const Namer *nm, int64_t e, int64_t need)
{
    if (e < 0 || e >= nm->n_entries)
        return -1;
    int64_t a = e ? nm->e_caps[e - 1] : 0, end = nm->e_caps[e];
    if (a < 0 || end > nm->n_caps || end - a < need)
        return -1;
    return a;
}

static inline void put(Namer *nm, uint8_t b)
{
    if (nm->n_out < nm->cap_out)
        nm->out[nm->n_out] = b;
    nm->n_out += 1;
}

static void put_text(Namer *nm, const char *s)
{
    while (*s)
        put(nm, (uint8_t)*s++);
}

/* One code point below 0x10000 (no surrogate, no NUL: the callers refuse those), as UTF-8;
 * a class name's '/' as '.' (method_label). */
static void put_code(Namer *nm, uint32_t c, int slash)
{
    if (c < 0x80) {
        put(nm, slash && c == '/' ? '.' : (uint8_t)c);
    } else if (c < 0x800) {
        put(nm, (uint8_t)(0xC0 | c >> 6));
        put(nm, (uint8_t)(0x80 | (c & 0x3F)));
    } else {
        put(nm, (uint8_t)(0xE0 | c >> 12));
        put(nm, (uint8_t)(0x80 | ((c >> 6) & 0x3F)));
        put(nm, (uint8_t)(0x80 | (c & 0x3F)));
    }
}

/* The length of the strictly valid UTF-8 sequence at s (Python's decoder accepts exactly
 * these), 0 when it is not one or is a NUL. */
static int utf8_sequence(const uint8_t *s, int64_t left)
{
    uint8_t b = s[0];
    if (b && b < 0x80)
        return 1;
    int n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4
                                                                                          : 0;
    if (!n || left < n)
        return 0;
    uint8_t lo = 0x80, hi = 0xBF;       /* the second byte's range */
    if (b == 0xE0)
        lo = 0xA0;
    else if (b == 0xED)
        hi = 0x9F;                       /* no surrogates */
    else if (b == 0xF0)
        lo = 0x90;
    else if (b == 0xF4)
        hi = 0x8F;                       /* nothing past U+10FFFF */
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* wire.read_string's varint, within the whole chunk as it reads (-1 past its end). */
static int chunk_varint(const Namer *nm, int64_t *pos, uint64_t *out)
{
    Walk w = {nm->d, nm->len, 0, 0, 0, 0, 0, 0};
    return varint(&w, pos, out);
}

/* The string at offset `at` as text: ABSENT (None or ""), WRITTEN (appended), DEFER; or, for
 * a reference to the String pool (encoding 2), 2 with its key in *ref. */
static int put_string(Namer *nm, uint64_t at, int slash, uint64_t *ref)
{
    if (at >= (uint64_t)nm->len)
        return DEFER;
    int64_t pos = (int64_t)at + 1;
    uint64_t n;
    uint8_t encoding = nm->d[at];
    if (encoding == 0 || encoding == 1)
        return ABSENT;
    if (encoding == 2)
        return chunk_varint(nm, &pos, ref) ? DEFER : 2;
    if (encoding < 3 || encoding > 5)
        return DEFER;
    /* wire._length: the length is checked against the bytes left in the chunk */
    if (chunk_varint(nm, &pos, &n) || n > MAX_STRING_BYTES || n > (uint64_t)(nm->len - pos))
        return DEFER;
    if (n == 0)
        return ABSENT;
    const uint8_t *s = nm->d + pos;
    if (encoding == 3) {
        /* names are ASCII but in odd recordings: a plain copy while they are */
        int64_t i = 0;
        uint8_t *to = nm->n_out + (int64_t)n <= nm->cap_out ? nm->out + nm->n_out : 0;
        for (; i < (int64_t)n && s[i] && s[i] < 0x80; i++)
            if (to)
                to[i] = slash && s[i] == '/' ? '.' : s[i];
        nm->n_out += i;
        while (i < (int64_t)n) {
            int k = utf8_sequence(s + i, (int64_t)n - i);
            if (!k)
                return DEFER;
            if (k == 1)
                put(nm, slash && s[i] == '/' ? '.' : s[i]);
            else
                for (int j = 0; j < k; j++)
                    put(nm, s[i + j]);
            i += k;
        }
    } else if (encoding == 5) {          /* Latin-1: each byte is its code point */
        for (uint64_t i = 0; i < n; i++) {
            if (!s[i])
                return DEFER;
            put_code(nm, s[i], slash);
        }
    } else {                             /* char array: n varints, each a UTF-16 unit */
        for (uint64_t i = 0; i < n; i++) {
            uint64_t unit;
            if (chunk_varint(nm, &pos, &unit))
                return DEFER;
            unit &= 0xFFFF;
            if (!unit || (unit >= 0xD800 && unit <= 0xDFFF))
                return DEFER;
            put_code(nm, (uint32_t)unit, slash);
        }
    }
    return WRITTEN;
}

/* names.stack_names's text(symbols(key)), appended: ABSENT, WRITTEN or DEFER. */
static int put_symbol(Namer *nm, uint64_t key, int slash)
{
    int64_t e = index_get(&nm->symbols, nm, key);
    if (e < 0)
        return ABSENT;                   /* no such symbol: None */
    int64_t a = first_capture(nm, e, 1);
    if (a < 0)
        return DEFER;
    uint64_t ref;
    int got = put_string(nm, nm->caps[a], slash, &ref);
    if (got != 2)
        return got;
    /* a symbol held in the String pool: its text if that entry is a string itself */
    e = index_get(&nm->strings, nm, ref);
    if (e < 0)
        return ABSENT;
    a = first_capture(nm, e, 1);
    if (a < 0)
        return DEFER;
    got = put_string(nm, nm->caps[a], slash, &ref);
    return got == 2 ? ABSENT : got;
}

/* One method entry's label "pkg.Class.method" appended with a NUL after it; 0, or DEFER with
 * nothing appended. */
static int put_method(Namer *nm, int64_t e)
{
    int64_t start = nm->n_out, a = first_capture(nm, e, 2);
    if (a < 0)
        return DEFER;
    uint64_t cls_key = nm->caps[a], name_key = nm->caps[a + 1];
    int got = ABSENT;
    int64_t c = index_get(&nm->classes, nm, cls_key), memo_len = 0;
    if (c >= 0 && nm->memo[2 * c]) {    /* a class's methods are many: its name copied */
        int64_t from = nm->memo[2 * c] - 1, n = nm->memo[2 * c + 1];
        if (start + n <= nm->cap_out)
            memcpy(nm->out + start, nm->out + from, (size_t)n);
        nm->n_out = start + n;
        got = WRITTEN;
    } else if (c >= 0) {
        int64_t ca = first_capture(nm, c, 1);
        got = ca < 0 ? DEFER : put_symbol(nm, nm->caps[ca], 1);
        if (got == WRITTEN && nm->n_out <= nm->cap_out)
            memo_len = nm->n_out - start;      /* kept once the whole label is */
    }
    if (got == ABSENT) {
        nm->n_out = start;
        put_text(nm, "<unknown class>");
    }
    if (got != DEFER) {
        put(nm, '.');
        int64_t at = nm->n_out;
        got = put_symbol(nm, name_key, 0);
        if (got == ABSENT) {
            nm->n_out = at;
            put_text(nm, "<unknown>");
        }
    }
    if (got == DEFER) {
        nm->n_out = start;
        return DEFER;
    }
    if (memo_len) {
        nm->memo[2 * c] = start + 1;
        nm->memo[2 * c + 1] = memo_len;
    }
    put(nm, 0);
    return 0;
}

/* The labels of the method entries of the runs methods[0 .. 2 n_methods) (entry indices of
 * the walk's arrays, as lc_jfr_checkpoints gave them: e_key, e_caps, caps), each followed by
 * a NUL, in
 * out (*n_out_out bytes: when more than cap_out, only the count is right: call again with
 * room), the methods' keys in named_keys in the same order; a method left to the Python code
 * is in neither. The class, symbol and string pools are the entries classes[], symbols[],
 * strings[], each given as n_* runs of entries (index_build: first, end; a key's entry: the
 * last given; the walk gives a pool's entries a checkpoint at a time, so Python passes those
 * as they are, not one by one). With n_wanted >= 0, methods[] is the Method pool as those
 * are and only the methods of the keys wanted[0 .. n_wanted) are named, in that order (a
 * chunk's stacks use about half of its methods; Python would otherwise index the pool by key
 * only to pick them). Returns how many were named, -1 when the arguments are inconsistent or
 * memory is short. */
int64_t lc_jfr_method_names(const uint8_t *data, int64_t len, const uint64_t *e_key,
                            const int64_t *e_caps, int64_t n_entries, const uint64_t *caps,
                            int64_t n_caps, const int64_t *methods, int64_t n_methods,
                            const int64_t *classes, int64_t n_classes,
                            const int64_t *symbols, int64_t n_symbols,
                            const int64_t *strings, int64_t n_strings,
                            const uint64_t *wanted, int64_t n_wanted,
                            uint8_t *out, int64_t cap_out, uint64_t *named_keys,
                            int64_t *n_out_out)
{
    if (len < 0 || n_entries < 0 || n_caps < 0 || n_methods < 0 || n_classes < 0 ||
        n_symbols < 0 || n_strings < 0 || cap_out < 0)
        return -1;
    Namer nm = {data, len, e_key, e_caps, caps, n_entries, n_caps, {0}, {0}, {0}, {0}, 0,
                out, 0, cap_out};
    int64_t named = -1;
    for (int64_t e = 0; e < n_entries; e++)      /* the capture ends never go back */
        if (e_caps[e] < (e ? e_caps[e - 1] : 0))
            return -1;
    nm.memo = calloc((size_t)n_entries + 1, 2 * sizeof(int64_t));
    if (!nm.memo ||
        index_build(&nm.classes, &nm, classes, n_classes) ||
        index_build(&nm.symbols, &nm, symbols, n_symbols) ||
        index_build(&nm.strings, &nm, strings, n_strings) ||
        (n_wanted >= 0 && index_build(&nm.methods, &nm, methods, n_methods)))
        goto done;
    named = 0;
    for (int64_t i = 0; i < n_wanted; i++) {
        int64_t e = index_get(&nm.methods, &nm, wanted[i]);
        if (e >= 0 && put_method(&nm, e) == 0)
            named_keys[named++] = e_key[e];
    }
    for (int64_t i = 0; n_wanted < 0 && i < n_methods; i++) {
        int64_t a = methods[2 * i], b = methods[2 * i + 1];
        if (a < 0 || b < a || b > n_entries) {
            named = -1;
            break;
        }
        for (int64_t e = a; e < b; e++)
            if (put_method(&nm, e) == 0)
                named_keys[named++] = e_key[e];
    }
done:
    free(nm.memo);
    free(nm.methods.slots);
    free(nm.classes.slots);
    free(nm.symbols.slots);
    free(nm.strings.slots);
    *n_out_out = nm.n_out;
    return named;
}

/* ---- A chunk's listed events tallied by one of their values (lc_jfr_tally) ------------------
 * stacks.FoldingReader._batch_ThreadPark's sums, exactly: rows[0 .. EVENT_VALUES n), each
 * event's (ticks, duration ticks, stack trace key, -); an event of ticks in [lo, hi) adds
 * floor(duration * 1e9 / tps) to its key's sum and 1 to its count (keys in the order first
 * met: keys[], sums[], counts[]; *n_keys_out of them), one before lo (the warm-up) to
 * *early_sum and *early_count; one at hi or later counts nowhere (without `windowed`, every
 * event is in the window). table: 2 * n slots or more
 * (a power of two, zeroed here). Returns 0, or -1 when a sum would pass 64 bits (the Python
 * code then tallies them: its integers have no limit) or tps is not positive. */
int64_t lc_jfr_tally(const int64_t *rows, int64_t n, int64_t windowed, int64_t lo, int64_t hi,
                     int64_t tps,
                     int64_t *table, int64_t n_table, int64_t *keys, int64_t *sums,
                     int64_t *counts, int64_t *n_keys_out, int64_t *early_sum,
                     int64_t *early_count)
{
    if (tps <= 0 || n < 0 || n_table < 2 * n || (n_table & (n_table - 1)))
        return -1;
    int shift = 64;
    for (int64_t s = n_table; s > 1; s >>= 1)
        shift--;
    memset(table, 0, (size_t)n_table * sizeof(int64_t));
    int64_t n_keys = 0, e_sum = 0, e_count = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t *v = rows + i * EVENT_VALUES;
        if (windowed && v[0] >= hi && v[0] >= lo)
            continue;                        /* (before lo is the warm-up's: as _split) */
        int64_t ns, *sum;
        if (tps == 1000000000) {
            ns = v[1];                       /* (every JDK on Linux: no 128-bit division) */
        } else {
            __int128 p = (__int128)v[1] * 1000000000;
            __int128 q = p / tps;
            if (p % tps != 0 && p < 0)
                q -= 1;                      /* Python's // rounds down */
            if (q > INT64_MAX || q < INT64_MIN)
                return -1;
            ns = (int64_t)q;
        }
        if (windowed && v[0] < lo) {
            sum = &e_sum;
            e_count += 1;
        } else {
            uint64_t key = (uint64_t)v[2];
            uint64_t h = shift < 64 ? (key * 0x9E3779B97F4A7C15ull) >> shift : 0;
            while (table[h] && keys[table[h] - 1] != v[2])
                h = (h + 1) & (uint64_t)(n_table - 1);
            if (!table[h]) {
                table[h] = n_keys + 1;
                keys[n_keys] = v[2];
                sums[n_keys] = 0;
                counts[n_keys] = 0;
                n_keys++;
            }
            sum = &sums[table[h] - 1];
            counts[table[h] - 1] += 1;
        }
        if (__builtin_add_overflow(*sum, ns, sum))
            return -1;
    }
    *n_keys_out = n_keys;
    *early_sum = e_sum;
    *early_count = e_count;
    return 0;
}

/* ---- A chunk's stacks as their frames' method keys (lc_jfr_stacks) ---------------------------
 * names.stack_names's traces(key) of each stack trace key wanted[0 .. n_wanted), from the
 * StackTrace pool's captures (its entries: the runs traces[0 .. 2 n_traces), a key's last
 * entry counting, as lc_jfr_method_names's pools): status[i] is -1 when the chunk has no
 * such entry, else 1 when its truncated field is 1 and 0 otherwise; the first n_framed keys'
 * frames' method keys are frames[ends[i - 1] .. ends[i]) (0 for the first; a key past
 * n_framed has none: only its truncation is asked), and each method key met is in
 * methods[0 .. *n_methods_out) once, in the order first met (the methods to name). Python
 * would otherwise index the whole pool by key, make a tuple of each stack's keys and a set of
 * them all, only to pick a few hundred stacks. *n_frames_out frames: when more than
 * cap_frames, only the counts are right (call again with room); methods[] takes as many as
 * frames[]. Returns 0, or -1 when the arguments are inconsistent, an entry's captures are
 * not a stack trace's (the truncation, the frames' count, then as many method keys) or
 * memory is short. */
int64_t lc_jfr_stacks(const uint8_t *data, int64_t len, const uint64_t *e_key,
                      const int64_t *e_caps, int64_t n_entries, const uint64_t *caps,
                      int64_t n_caps, const int64_t *traces, int64_t n_traces,
                      const uint64_t *wanted, int64_t n_wanted, int64_t n_framed,
                      int64_t *status, int64_t *ends, uint64_t *frames, int64_t cap_frames,
                      uint64_t *methods, int64_t *n_frames_out, int64_t *n_methods_out)
{
    if (len < 0 || n_entries < 0 || n_caps < 0 || n_traces < 0 || n_wanted < 0 ||
        n_framed < 0 || n_framed > n_wanted || cap_frames < 0)
        return -1;
    for (int64_t e = 0; e < n_entries; e++)      /* the capture ends never go back */
        if (e_caps[e] < (e ? e_caps[e - 1] : 0))
            return -1;
    Namer nm = {data, len, e_key, e_caps, caps, n_entries, n_caps, {0}, {0}, {0}, {0}, 0,
                0, 0, 0};
    int64_t result = -1, n_frames = 0, n_methods = 0;
    Index seen = {0};       /* the method keys met: slot = index in methods[] + 1 */
    if (index_build(&nm.methods, &nm, traces, n_traces))
        goto done;
    for (int64_t i = 0; i < n_wanted; i++) {
        int64_t e = index_get(&nm.methods, &nm, wanted[i]);
        if (e < 0) {
            status[i] = -1;
            if (i < n_framed)
                ends[i] = n_frames;
            continue;
        }
        int64_t a = first_capture(&nm, e, 2);
        if (a < 0)
            goto done;
        uint64_t n = caps[a + 1];
        if (n > (uint64_t)(e_caps[e] - a - 2))
            goto done;
        status[i] = caps[a] == 1;
        if (i >= n_framed)
            continue;
        for (uint64_t k = 0; k < n; k++, n_frames++)
            if (n_frames < cap_frames)  /* (else counted: the caller calls again with room) */
                frames[n_frames] = caps[a + 2 + (int64_t)k];
        ends[i] = n_frames;
    }
    if (n_frames > cap_frames) {
        result = 0;
        goto done;
    }
    /* the methods once each, in a table sized by the frames met (not by the room given:
     * zeroing that was most of the call) */
    int bits = 3;
    while (bits < 62 && ((int64_t)1 << bits) < 2 * n_frames)
        bits++;
    seen.mask = ((uint64_t)1 << bits) - 1;
    seen.shift = 64 - bits;
    seen.slots = calloc((size_t)1 << bits, sizeof(int64_t));
    if (!seen.slots)
        goto done;
    for (int64_t f = 0; f < n_frames; f++) {
        uint64_t key = frames[f], h = slot_of(&seen, key);
        while (seen.slots[h] && methods[seen.slots[h] - 1] != key)
            h = (h + 1) & seen.mask;
        if (!seen.slots[h]) {
            seen.slots[h] = n_methods + 1;
            methods[n_methods++] = key;
        }
    }
    result = 0;
done:
    free(seen.slots);
    free(nm.methods.slots);
    *n_frames_out = n_frames;
    *n_methods_out = n_methods;
    return result;
}
