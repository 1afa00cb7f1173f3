/* hgrm's interval summary lines, compiled (see line_text.py, which builds and loads this file,
 * and falls back to the Python formatting when it cannot). Printing them one f-string a line
 * was ~0.5 s of one core's ~3 s on the 24-hour log (86,400 lines).
 *
 * The numbers that need Java's rounding (every value, divided by the output ratio) come as
 * texts made by Python (java_format_fixed, once per value), with the sorted values; this
 * file only prints the times (as '%.3f' does, for a time that is the double nearest a whole
 * number of milliseconds, below 2^43: line_text.exact_millis, which the caller checks and this
 * file again), the two counts as integers, and joins the texts.
 */
#include <stdint.h>
#include <math.h>
#include <string.h>

#define LC_LINES_ABI 1
#define EXACT_MILLIS 8796093022208.0   /* 2^43: line_text.EXACT_MILLIS */
#define CELLS 9        /* I: 50% 90% max, T: 50% 90% 99% 99.9% 99.99% max */

int64_t lc_lines_abi(void) { return LC_LINES_ABI; }

static inline uint8_t *put_int(uint8_t *p, int64_t value)
{
    char digits[24];
    int n = 0;
    uint64_t v = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (value < 0)
        *p++ = '-';
    while (n)
        *p++ = (uint8_t)digits[--n];
    return p;
}

/* '%*.3f' of t, for a t that is the double nearest k / 1000 with |t| < 2^43 (then the exact
 * value is within half a unit in the last place, under 0.0005, of k / 1000, so that is what
 * '%.3f' prints); NULL for any other t. */
static inline uint8_t *put_time(uint8_t *p, double t, int64_t width)
{
    double k = rint(t * 1000.0);
    if (!(fabs(t) < EXACT_MILLIS) || k / 1000.0 != t)
        return NULL;
    uint8_t text[32];
    int n = 0;
    uint64_t whole = (uint64_t)fabs(k);
    for (int d = 0; d < 3; d++, whole /= 10)
        text[n++] = (uint8_t)('0' + whole % 10);
    text[n++] = '.';
    do {
        text[n++] = (uint8_t)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (signbit(t))       /* (-0.0 too, as '%.3f' prints it) */
        text[n++] = '-';
    for (int64_t pad = width - n; pad > 0; pad--)
        *p++ = ' ';
    while (n)
        *p++ = text[--n];
    return p;
}

static inline uint8_t *put_text(uint8_t *p, const uint8_t *table, const int64_t *offsets,
                                int64_t k)
{
    int64_t a = offsets[k], len = offsets[k + 1] - a;
    memcpy(p, table + a, (size_t)len);
    return p + len;
}

/* Where value v's text is: slots[i] for known[i] == v (known sorted), found from the last
 * value of the same column (a running total's percentile changes seldom) or by bisection;
 * -1 when v is not known. */
static inline int64_t slot_of(int64_t v, const int64_t *restrict known,
                              const int64_t *restrict slots, int64_t n_known, int64_t *last_value, int64_t *last_slot)
{
    if (*last_slot >= 0 && v == *last_value)
        return *last_slot;
    int64_t lo = 0, hi = n_known;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (known[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n_known || known[lo] != v)
        return -1;
    *last_value = v;
    *last_slot = slots[lo];
    return slots[lo];
}

/* n lines into out[0 .. cap): line r of times[r] (printed '%*.3f', time_width), counts[r],
 * totals[r] and, for each of its 9 values v = values[r * 9 + j], the text table[offsets[k] ..
 * offsets[k + 1]) of k = slot_of(v).
 * csv: "T,C,a,b,m,N,p,p,p,p,p,x\n", else "T: I:C ( a b m ) T:N ( p p p p p x )\n".
 * Returns the bytes written; -2 when a value is not known (the caller adds its text, and
 * calls again); -1 when the arguments are inconsistent, a time is not one put_time prints,
 * or out is too small. */
int64_t lc_interval_lines(const double *restrict times, int64_t n, int64_t time_width,
                          const int64_t *restrict counts, const int64_t *restrict totals,
                          const int64_t *restrict values, const int64_t *restrict known,
                          const int64_t *restrict slots, int64_t n_known,
                          const uint8_t *restrict table, const int64_t *restrict offsets,
                          int64_t n_texts, int64_t csv, uint8_t *restrict out, int64_t cap)
{
    int64_t longest = 0, last_value[CELLS], last_slot[CELLS], k[CELLS];
    if (n < 0 || n_texts < 0 || n_known < 0 || time_width < 0 || time_width > 32
            || offsets[0] != 0)
        return -1;
    for (int64_t i = 0; i < n_texts; i++) {
        int64_t len = offsets[i + 1] - offsets[i];
        if (len < 0)
            return -1;
        if (len > longest)
            longest = len;
    }
    for (int64_t i = 0; i < n_known; i++)
        if (slots[i] < 0 || slots[i] >= n_texts || (i && known[i] <= known[i - 1]))
            return -1;
    for (int j = 0; j < CELLS; j++)
        last_slot[j] = -1;
    /* a line at most: a time (sign, 15 digits, point, 3 decimals, or its width), two integers
     * of up to 20 characters, the texts, and the fixed characters */
    int64_t line_max = 64 + 2 * 24 + CELLS * (longest + 1) + 32;
    uint8_t *p = out, *end = out + cap;
    for (int64_t r = 0; r < n; r++) {
        if (end - p < line_max)
            return -1;
        for (int j = 0; j < CELLS; j++) {
            k[j] = slot_of(values[r * CELLS + j], known, slots, n_known, &last_value[j],
                           &last_slot[j]);
            if (k[j] < 0)
                return -2;
        }
        p = put_time(p, times[r], time_width);
        if (!p)
            return -1;
        if (csv) {
            *p++ = ',';
            p = put_int(p, counts[r]);
            for (int j = 0; j < 3; j++) {
                *p++ = ',';
                p = put_text(p, table, offsets, k[j]);
            }
            *p++ = ',';
            p = put_int(p, totals[r]);
            for (int j = 3; j < CELLS; j++) {
                *p++ = ',';
                p = put_text(p, table, offsets, k[j]);
            }
            *p++ = '\n';
            continue;
        }
        memcpy(p, ": I:", 4);
        p = put_int(p + 4, counts[r]);
        memcpy(p, " (", 2);
        p += 2;
        for (int j = 0; j < 3; j++) {
            *p++ = ' ';
            p = put_text(p, table, offsets, k[j]);
        }
        memcpy(p, " ) T:", 5);
        p = put_int(p + 5, totals[r]);
        memcpy(p, " (", 2);
        p += 2;
        for (int j = 3; j < CELLS; j++) {
            *p++ = ' ';
            p = put_text(p, table, offsets, k[j]);
        }
        memcpy(p, " )\n", 3);
        p += 3;
    }
    return p - out;
}
