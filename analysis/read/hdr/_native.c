/* The two inner loops of `python -m analysis hgrm`, compiled (see native.py, which builds and
 * loads this file, and falls back to the numpy code when it cannot):
 *
 *   lc_decode_v2   ZigZag LEB128 counts of many V2 payloads -> one batch's (keys, counts),
 *                  the arrays batch._decode_v2_batch builds with numpy;
 *   lc_running     a batch's rows added to the accumulated counts array, with each row's own
 *                  percentiles and the running totals' percentiles after every row (what
 *                  running.IntegerRunning.add_rows finds with vectorised searches);
 *   lc_add_bodies  both at once for a group of plain bodies, row by row (the hgrm command).
 *
 * No Python headers: numpy arrays arrive as pointers (ctypes). Every index is checked against
 * the length of the array it indexes. Anything unusual in a payload (a malformed or truncated
 * varint, a count beyond the counts array, a zero run over 2^31-1, totals near 2^63) is not
 * judged here: the row is handed back to the Python decoder, whose error message stands.
 * Signed arithmetic is done in uint64_t where it could wrap (compiled with -fwrapv too).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LC_ABI 5
#define INT31_MAX 2147483647LL
#define TOTAL_LIMIT (1ULL << 62)  /* rows or totals at or past this go to the numpy path */
#define BLOCK_BITS 5              /* lc_running's block sums: 32 counts-array entries each */
#define BLOCK (1LL << BLOCK_BITS)
#define N_TOTAL 5                 /* running.TOTAL_PERCENTILES */

int64_t lc_abi(void) { return LC_ABI; }

enum { ROW_DECODED = 0, ROW_DEFERRED = 1 };

/* One V2 counts body, buf[p .. end), decoded into keys (the index of each non-zero count) and
 * counts (the counts): -> the number of entries, their sum in *sum and the row's span in *span
 * (the position after its last varint, or after its last count when zeros run past the counts
 * array, which is harmless: Java's decoder only skips them; span may be NULL); or -1 for a body left to the
 * Python decoder (a truncated varint, a count at or past `limit`, a zero run over 2^31-1, a
 * sum at or past TOTAL_LIMIT). keys and counts have room for end - p entries. */
static inline int64_t decode_body(const uint8_t *restrict buf, int64_t p, int64_t end,
                                  int64_t limit, int64_t *restrict keys,
                                  int64_t *restrict counts, uint64_t *sum, int64_t *span)
{
    int64_t e = 0, position = 0, last_filled = -1;
    uint64_t total = 0;
    while (p < end) {
        uint64_t v = buf[p++];
        if (v >= 0x80) {   /* ZigZagEncoding.getLong: up to 8 bytes of 7 bits, a 9th of 8 */
            v &= 0x7f;
            for (int k = 1;; k++) {
                if (p >= end)                    /* ends inside a varint */
                    return -1;
                uint64_t byte = buf[p++];
                if (k == 8) {
                    v |= byte << 56;
                    break;
                }
                v |= (byte & 0x7f) << (7 * k);
                if (byte < 0x80)
                    break;
            }
        }
        int64_t value = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
        int64_t is_count = value > 0;
        /* (rare, so predicted: a count beyond the counts array, a zero run over 2^31-1) */
        if ((is_count & (position >= limit)) | (value < -INT31_MAX))
            return -1;
        /* Counts and zero runs alternate unpredictably: no branch on which this is. The slot
         * e is always inside the arrays: e counts fewer varints than bytes read. */
        uint64_t count_mask = 0 - (uint64_t)is_count;          /* all ones for a count */
        int64_t run_mask = value >> 63;                        /* all ones for a run */
        keys[e] = position;
        counts[e] = value;
        e += is_count;
        total += (uint64_t)value & count_mask;                 /* < 2^62 + 2^63 */
        if (span)          /* (a constant where inlined: no test in the loop) */
            last_filled = (int64_t)(((uint64_t)position & count_mask)
                                    | ((uint64_t)last_filled & ~count_mask));
        position += (-value & run_mask) | (1 & ~run_mask);     /* < 2^31 a byte */
        if (total >= TOTAL_LIMIT)
            return -1;
    }
    *sum = total;
    if (span)
        *span = position > limit ? last_filled + 1 : position;
    return e;
}

/* Decode n V2 counts bodies: body r is buf[offsets[r] .. offsets[r + 1]).
 *
 * Writes every non-zero count as keys[e] = r << *stride_bits | index, counts[e] = count, rows in
 * order; row r's entries are [row_entries[r], row_entries[r + 1]), totals[r] their sum.
 * status[r] = ROW_DEFERRED for a row left to the Python decoder (it then has no entries).
 * *stride_bits comes in as the largest allowed and goes out narrowed as batch.py narrows it:
 * at least 6, and enough for every decoded row's span (the position after its last varint,
 * or after its last count when zeros run past the counts array).
 * Returns the number of entries, or -1 when the arguments are inconsistent. */
int64_t lc_decode_v2(const uint8_t *restrict buf, int64_t buf_len,
                     const int64_t *restrict offsets, int64_t n, const int64_t *restrict cal,
                     int64_t *restrict keys, int64_t *restrict counts, int64_t capacity,
                     int64_t *restrict row_entries, int64_t *restrict totals,
                     uint8_t *restrict status, int64_t *restrict stride_bits)
{
    int64_t e = 0, max_span = 0;
    if (n < 0 || buf_len < 0 || capacity < buf_len || *stride_bits < 6 || *stride_bits > 62)
        return -1;
    if (offsets[0] != 0 || offsets[n] != buf_len)
        return -1;
    if (n > 1 && n - 1 > (INT64_MAX >> *stride_bits))   /* row << stride_bits must fit */
        return -1;
    for (int64_t r = 0; r < n; r++)
        if (offsets[r + 1] < offsets[r] || cal[r] < 0)
            return -1;
    for (int64_t r = 0; r < n; r++) {
        uint64_t total;
        int64_t span;
        row_entries[r] = e;
        int64_t got = decode_body(buf, offsets[r], offsets[r + 1], cal[r], keys + e, counts + e,
                                  &total, &span);
        if (got < 0) {
            status[r] = ROW_DEFERRED;
            totals[r] = 0;
            continue;
        }
        e += got;
        status[r] = ROW_DECODED;
        totals[r] = (int64_t)total;
        if (span > max_span)     /* batch.py counts the same span */
            max_span = span;
    }
    row_entries[n] = e;
    int64_t bits = 6;
    if (max_span - 1 > 0) {
        int64_t length = 64 - __builtin_clzll((uint64_t)(max_span - 1));
        if (length > bits)
            bits = length;
    }
    if (bits > *stride_bits)
        bits = *stride_bits;
    *stride_bits = bits;
    for (int64_t r = 0; r < n; r++) {
        int64_t row_key = r << bits;
        for (int64_t k = row_entries[r]; k < row_entries[r + 1]; k++)
            keys[k] |= row_key;        /* (keys[k] < 2^bits: below every decoded row's span) */
    }
    return e;
}

/* percentile_target_count with Java's double arithmetic: ceil(requested * total / 100),
 * saturated at 2^63 - 1, at least 1 (`requested` is nextafter(percentile, -inf), clamped). */
static int64_t target_count(double requested, int64_t total)
{
    double fp = (requested * (double)total) / 100.0;
    if (fp >= 9.223372036854775807e18)
        return INT64_MAX;
    int64_t t = (int64_t)fp;
    if ((double)t < fp)       /* ceil: exact, since fp < 2^53 whenever it has a fraction */
        t++;
    return t < 1 ? 1 : t;
}

/* One row added to the accumulated counts array (lc_running's loop body, also lc_add_bodies'):
 * its entries keys/cnt[a .. b), index = key & mask (< dense_len: the callers check), ascending,
 * `count` their sum. pos/cum/total: the running percentiles' positions and counts, and the
 * accumulated total, advanced; row: its 10 outputs (see lc_running). Returns 0, or -1 when a
 * running percentile's search runs off the counts array (inconsistent state). */
static int add_row(const int64_t *restrict keys, const int64_t *restrict cnt, int64_t a,
                   int64_t b, int64_t mask, uint64_t count, int64_t *restrict dense,
                   int64_t dense_len, int64_t *restrict blocks, int64_t *pos, int64_t *cum,
                   uint64_t *total_io, const double *restrict requested, int64_t *restrict row)
{
    uint64_t total = *total_io;
    int64_t t50 = target_count(requested[0], (int64_t)count);
    int64_t t90 = target_count(requested[1], (int64_t)count);
    int64_t ip50 = -1, ip90 = -1, delta[N_TOTAL];
    uint64_t sum = 0;
    int next = 0;
    for (int64_t k = a; k < b; k++) {
        int64_t index = keys[k] & mask;
        int64_t c = cnt[k];
        /* the running percentiles' counts grow by this row's counts at or below them */
        while (next < N_TOTAL && pos[next] < index)
            delta[next++] = (int64_t)sum;
        sum += (uint64_t)c;
        if (ip50 < 0 && (int64_t)sum >= t50)
            ip50 = index;
        if (ip90 < 0 && (int64_t)sum >= t90)
            ip90 = index;
        dense[index] += c;
        blocks[index >> BLOCK_BITS] += c;
    }
    while (next < N_TOTAL)
        delta[next++] = (int64_t)sum;
    total += count;
    *total_io = total;
    row[0] = (int64_t)count;
    row[1] = ip50;
    row[2] = ip90;
    row[3] = b > a ? (keys[b - 1] & mask) : -1;
    row[4] = (int64_t)total;
    for (int j = 0; j < N_TOTAL; j++) {
        cum[j] += delta[j];
        if (!total) {
            row[5 + j] = -1;
            continue;
        }
        int64_t t = target_count(requested[2 + j], (int64_t)total);
        int64_t p = pos[j], c = cum[j];
        if (c < t) {
            while (c < t) {
                int64_t q = p + 1;
                if (q >= dense_len)
                    return -1;
                if (!(q & (BLOCK - 1)) && c + blocks[q >> BLOCK_BITS] < t) {
                    c += blocks[q >> BLOCK_BITS];
                    p = q + BLOCK - 1;
                } else {
                    c += dense[q];
                    p = q;
                }
            }
        } else {
            while (p > 0) {
                if ((p & (BLOCK - 1)) == BLOCK - 1 && c - blocks[p >> BLOCK_BITS] >= t) {
                    c -= blocks[p >> BLOCK_BITS];
                    p -= BLOCK;
                } else if (c - dense[p] >= t) {
                    c -= dense[p];
                    p--;
                } else {
                    break;
                }
            }
        }
        pos[j] = p;
        cum[j] = c;
        row[5 + j] = p;
    }
    return 0;
}

/* The running state the caller keeps between calls: each requested percentile's position in
 * the counts array and the cumulative count there, then the total. A position out of the
 * array, or out of order, means the arguments are inconsistent (-1). */
static int load_state(const int64_t *restrict state, int64_t dense_len, int64_t *restrict pos,
                      int64_t *restrict cum)
{
    for (int j = 0; j < N_TOTAL; j++) {
        pos[j] = state[j];
        cum[j] = state[N_TOTAL + j];
        if (pos[j] < -1 || pos[j] >= dense_len || (j && pos[j] < pos[j - 1]))
            return -1;
    }
    return 0;
}

static void store_state(int64_t *restrict state, const int64_t *restrict pos,
                        const int64_t *restrict cum, uint64_t total)
{
    for (int j = 0; j < N_TOTAL; j++) {
        state[j] = pos[j];
        state[N_TOTAL + j] = cum[j];
    }
    state[2 * N_TOTAL] = (int64_t)total;
}

/* Add the rows of a batch to the accumulated counts array, in order.
 *
 * Row r's entries are keys/cnt[starts[r] .. ends[r]), index = key & mask, ascending.
 * dense[dense_len] is the accumulated counts array, blocks[blocks_len = dense_len / 32] its
 * sums per block of 32 entries (both updated). state[0..4]: for each running percentile, the index holding
 * its answer after the previous row (-1 before any count), state[5..9]: the accumulated count
 * up to and including that index, state[10]: the accumulated total.
 * requested[0..1]: the rows' own percentiles (50, 90), requested[2..6] the running ones, each
 * as target_count takes it. Per row, out[r * 10 + ...]: 0 its count, 1-2 the index of its
 * 50th and 90th percentile, 3 its highest index, 4 the running total, 5-9 the index of each
 * running percentile (indices are -1 where the row, or the total, is empty). row_counts: each
 * row's count (the sum of its cnt entries) when the caller knows it, or NULL.
 *
 * Counts only grow, so each running percentile's index moves from where it was: forward while
 * the count up to it is below the new target, backward while the count below it still reaches
 * the target, whole blocks at a time where a block sum allows. Same answers as Java's scan
 * from index 0 (the first index whose cumulative count reaches the target).
 * Returns 0, or -1 when the arguments are inconsistent (nothing is changed then, except when
 * the total outgrows the counts array, which cannot happen with consistent state). */
int64_t lc_running(const int64_t *restrict keys, const int64_t *restrict cnt, int64_t n_keys,
                   const int64_t *restrict starts, const int64_t *restrict ends, int64_t n_rows,
                   int64_t mask, int64_t *restrict dense, int64_t dense_len,
                   int64_t *restrict blocks, int64_t blocks_len, int64_t *restrict state,
                   const double *restrict requested, const int64_t *restrict row_counts,
                   int64_t *restrict out)
{
    int64_t pos[N_TOTAL], cum[N_TOTAL];
    uint64_t total = (uint64_t)state[2 * N_TOTAL];
    if (dense_len <= 0 || dense_len % BLOCK || blocks_len != dense_len / BLOCK || mask < 0
            || mask >= dense_len || n_rows < 0)
        return -1;
    for (int64_t r = 0; r < n_rows; r++)
        if (starts[r] < 0 || ends[r] < starts[r] || ends[r] > n_keys)
            return -1;
    if (load_state(state, dense_len, pos, cum))
        return -1;
    for (int64_t r = 0; r < n_rows; r++) {
        int64_t a = starts[r], b = ends[r];
        uint64_t count = 0;
        if (row_counts)            /* the decoder's row totals: the same sums, known already */
            count = (uint64_t)row_counts[r];
        else
            for (int64_t k = a; k < b; k++)
                count += (uint64_t)cnt[k];
        if (add_row(keys, cnt, a, b, mask, count, dense, dense_len, blocks, pos, cum, &total,
                    requested, out + r * 10))
            return -1;
    }
    store_state(state, pos, cum, total);
    return 0;
}

/* lc_decode_v2 and lc_running in one pass, one row at a time, through a scratch buffer the
 * size of the longest body (so that a batch's keyed entries never go through memory): n V2
 * counts bodies buf[offsets[r] .. offsets[r + 1]), row r's counts array cals[r] entries long,
 * each decoded (checked as lc_decode_v2 checks it), and the chosen ones (chosen[r] != 0, each
 * with cals[r] <= dense_len) added in order as lc_running adds them (same dense, blocks,
 * state and requested; out holds a row of 10 per chosen row). Returns the number of chosen
 * rows; or, when row r is one lc_decode_v2 would defer, or a chosen one that would take the
 * accumulated total to TOTAL_LIMIT, -2 - r, with dense, blocks and state as they came (the
 * rows before it taken out again): the caller then decodes the batch the general way, which
 * words the errors. -1: inconsistent arguments. */
int64_t lc_add_bodies(const uint8_t *restrict buf, const int64_t *restrict offsets, int64_t n,
                      const uint8_t *restrict chosen, const int64_t *restrict cals,
                      int64_t *restrict dense, int64_t dense_len, int64_t *restrict blocks,
                      int64_t blocks_len, int64_t *restrict state,
                      const double *restrict requested, int64_t *restrict scratch,
                      int64_t scratch_len, int64_t *restrict out)
{
    int64_t pos[N_TOTAL], cum[N_TOTAL], m = 0;
    uint64_t total = (uint64_t)state[2 * N_TOTAL];
    int64_t *keys = scratch, *counts = scratch + scratch_len / 2;
    if (dense_len <= 0 || dense_len % BLOCK || blocks_len != dense_len / BLOCK || n < 0
            || offsets[0] != 0 || total >= TOTAL_LIMIT)
        return -1;
    for (int64_t r = 0; r < n; r++)
        if (offsets[r + 1] < offsets[r] || offsets[r + 1] - offsets[r] > scratch_len / 2
                || cals[r] < 0 || (chosen[r] && cals[r] > dense_len))
            return -1;
    if (load_state(state, dense_len, pos, cum))
        return -1;
    for (int64_t r = 0; r < n; r++) {
        uint64_t count;
        int64_t e = decode_body(buf, offsets[r], offsets[r + 1], cals[r], keys, counts, &count,
                                NULL);
        int refused = e < 0 || (chosen[r] && count >= TOTAL_LIMIT - total);
        if (refused || (chosen[r] && add_row(keys, counts, 0, e, INT64_MAX, count, dense,
                                             dense_len, blocks, pos, cum, &total, requested,
                                             out + m * 10))) {
            /* (rare: a corrupt or huge payload) take the chosen rows before it out again
             * (and this one, whose counts went in before its search failed) */
            for (int64_t j = 0; j < (refused ? r : r + 1); j++) {
                if (!chosen[j])
                    continue;
                int64_t undo = decode_body(buf, offsets[j], offsets[j + 1], cals[j], keys,
                                           counts, &count, NULL);
                for (int64_t x = 0; x < undo; x++) {
                    dense[keys[x]] -= counts[x];
                    blocks[keys[x] >> BLOCK_BITS] -= counts[x];
                }
            }
            return refused ? -2 - r : -1;
        }
        m += chosen[r] != 0;
    }
    store_state(state, pos, cum, total);
    return m;
}

/* ---- reading: lines and payload bodies (blocks.py) ------------------------------------------
 *
 * lc_scan_lines  split whole lines (ended by \n, \r\n or a bare \r, as Python's universal
 *                newlines) and recognise the plain histogram line of a normal log:
 *                `[Tag=NAME,]D[.D],D[.D],D[.D],BASE64` (a tag name of printable ASCII without
 *                spaces or commas, no sign, no exponent, no spaces, at most 15 integer digits, a
 *                payload of whole base64 quads). Everything else is left to the Python line
 *                parser (lines.line_item), whose rules and messages stand.
 * lc_kinds       the inflated V2 payloads of a group, joined: which of the headers seen so
 *                far each has (a group may hold a few layouts: a log's empty intervals are often
 *                written with another highest trackable value).
 * lc_bodies      the same: checks each has a counts body ending on a whole varint, and packs
 *                the bodies.
 */

static const uint8_t *lc_number(const uint8_t *p, const uint8_t *end, double *out)
{
    /* D+(.D+)? then ',': the number in *out, the byte after the comma returned; NULL for
     * anything else. strtod is correctly rounded, as Python's float(); a locale whose radix is
     * not '.' stops it early, which is caught below (the line then goes to Python). */
    const uint8_t *q = p;
    char text[64];
    while (q < end && *q >= '0' && *q <= '9')
        q++;
    if (q == p || q - p > 15)
        return NULL;
    if (q < end && *q == '.') {
        const uint8_t *f = ++q;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q == f || q - p > 60)
            return NULL;
    }
    if (q >= end || *q != ',')
        return NULL;
    memcpy(text, p, (size_t)(q - p));
    text[q - p] = 0;
    char *stop;
    *out = strtod(text, &stop);
    if (stop != text + (q - p))
        return NULL;
    return q + 1;
}

static uint8_t lc_b64[256];       /* 1 for the base64 alphabet and '=' */

/* After `Tag=` at p: the byte after the name's comma, or NULL for a name that is empty or
 * holds anything but printable ASCII (a space, a control or latin-1 byte: Python's strip and
 * split rules are left to decide those). */
static const uint8_t *lc_tag(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *q = p;
    while (q < end && *q > ' ' && *q < 0x7f && *q != ',')
        q++;
    return q > p && q < end && *q == ',' ? q + 1 : NULL;
}

/* Lines of buf[0 .. len): line k is buf[starts[k] .. ends[k]) without its terminator; a last
 * line without one counts. plain[k] = 1 for a plain histogram line, with nums[3k .. 3k+2]
 * its timestamp, length and max and its payload buf[payloads[k] .. ends[k]); heads[k] is
 * where its timestamp starts: starts[k] untagged, else after `Tag=NAME,` (the name is
 * buf[starts[k] + 4 .. heads[k] - 1)).
 * Returns the number of lines, or -1 when there are more than cap. */
int64_t lc_scan_lines(const uint8_t *restrict buf, int64_t len, int64_t cap,
                      int64_t *restrict starts, int64_t *restrict ends, uint8_t *restrict plain,
                      double *restrict nums, int64_t *restrict payloads, int64_t *restrict heads)
{
    if (!lc_b64['A']) {
        for (int c = 'A'; c <= 'Z'; c++)
            lc_b64[c] = lc_b64[c + 32] = 1;
        for (int c = '0'; c <= '9'; c++)
            lc_b64[c] = 1;
        lc_b64['+'] = lc_b64['/'] = lc_b64['='] = 1;
    }
    const uint8_t *end = buf + len, *p = buf;
    int64_t k = 0;
    while (p < end) {
        if (k >= cap)
            return -1;
        const uint8_t *q = p, *payload = NULL;
        int ok = 0;
        if (end - p > 4 && !memcmp(p, "Tag=", 4))
            q = lc_tag(p + 4, end);
        heads[k] = q ? q - buf : p - buf;
        if (q)
            q = lc_number(q, end, &nums[3 * k]);
        if (q)
            q = lc_number(q, end, &nums[3 * k + 1]);
        if (q)
            q = lc_number(q, end, &nums[3 * k + 2]);
        if (q) {
            /* the line's end by memchr; its bytes checked without a branch a byte */
            const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
            const uint8_t *stop = nl ? nl : end;
            if (stop > q && stop[-1] == '\r')
                stop--;
            uint8_t all = 1;
            for (const uint8_t *c = q; c < stop; c++)
                all &= lc_b64[*c];
            payload = q;
            ok = all && stop > q && (stop - q) % 4 == 0;
            q = stop;
        }
        if (!ok) {
            q = p;
            while (q < end && *q != '\n' && *q != '\r')
                q++;
        }
        starts[k] = p - buf;
        ends[k] = q - buf;
        plain[k] = (uint8_t)ok;
        payloads[k] = ok ? payload - buf : ends[k];
        k++;
        if (q < end && *q == '\r' && q + 1 < end && q[1] == '\n')
            q++;
        p = q < end ? q + 1 : end;
    }
    return k;
}

/* The inflated payloads of a group, joined: payload r is buf[offsets[r] .. offsets[r + 1]).
 * From row `from` on: kinds[r] = the header among the k known ones (36 bytes each: bytes
 * [0..4) and [8..40) of a payload, checked by the Python parser) that row r has. Returns n
 * when every row has one, else the first row that has none (a row under 40 bytes: -1 - r). */
int64_t lc_kinds(const uint8_t *restrict buf, const int64_t *restrict offsets, int64_t from,
                 int64_t n, const uint8_t *restrict known, int64_t k, int64_t *restrict kinds)
{
    for (int64_t r = from; r < n; r++) {
        const uint8_t *p = buf + offsets[r];
        if (offsets[r + 1] - offsets[r] < 40)
            return -1 - r;
        int64_t j = 0;
        while (j < k && (memcmp(p, known + 36 * j, 4) || memcmp(p + 8, known + 36 * j + 4, 32)))
            j++;
        if (j == k)
            return r;
        kinds[r] = j;
    }
    return n;
}

/* The same payloads, each of the header lc_kinds found (kinds[r]): each must have a payload
 * length field (bytes 4..8, big-endian) >= 0 and min(limits[kinds[r]], that length) bytes of
 * counts after the header, the last one ending a varint (< 0x80). The counts bodies are packed
 * at the front of buf itself, their lengths into lengths. Returns the packed size, or -1 - r
 * for the first payload r that is otherwise (buf is then partly overwritten; the caller takes
 * the general path). */
int64_t lc_bodies(uint8_t *buf, const int64_t *restrict offsets, int64_t n,
                  const int64_t *restrict kinds, const int64_t *restrict limits,
                  int64_t *restrict lengths)
{
    int64_t o = 0;
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *p = buf + offsets[r];
        int64_t size = offsets[r + 1] - offsets[r];
        if (size < 40)
            return -1 - r;
        int64_t length = (int32_t)((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16
                                   | (uint32_t)p[6] << 8 | p[7]);
        if (length < 0)
            return -1 - r;
        int64_t limit = limits[kinds[r]];
        int64_t body = length < limit ? length : limit;
        if (size < 40 + body || (body && p[40 + body - 1] >= 0x80))
            return -1 - r;
        memmove(buf + o, p + 40, (size_t)body);     /* (o < offsets[r] + 40: in place) */
        lengths[r] = body;
        o += body;
    }
    return o;
}

/* The base64-decoded payloads of a group, joined: payload r is buf[offsets[r] .. offsets[r +
 * 1]). Each must be what payload._parse_common_payload takes whole: a compressed V2 cookie,
 * a compressed length of exactly the bytes after the 8-byte header and at most
 * max_compressed, and a zlib header whose window ISA-L and zlib agree on (codec.inflate).
 * Returns 0, or -1 - r for the first payload r that is otherwise. */
int64_t lc_outer(const uint8_t *restrict buf, const int64_t *restrict offsets, int64_t n,
                 int64_t max_compressed)
{
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *p = buf + offsets[r];
        int64_t size = offsets[r + 1] - offsets[r];
        if (size < 9)
            return -1 - r;
        uint32_t cookie = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        int64_t compressed = (int32_t)((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16
                                       | (uint32_t)p[6] << 8 | p[7]);
        if ((cookie & ~0xf0u) != 0x1c849304u || compressed != size - 8
                || compressed > max_compressed || p[8] >> 4 > 7)
            return -1 - r;
    }
    return 0;
}
