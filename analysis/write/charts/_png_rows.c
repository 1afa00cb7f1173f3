/* The og:image's PNG rows, filtered as Pillow's PNG encoder (ZipEncode.c) chooses: per row the
 * filters none, up, sub and Paeth are tried in that order, and one is kept only when its sum of
 * min(v, 256 - v) over the filtered bytes is strictly lower than the best so far. The bytes
 * must equal Pillow's (tests/test_png_encode.py compares them), so the order and the strict
 * comparison are the rule, not a detail. Input: RGBX pixels (matplotlib's canvas, the fourth
 * byte dropped as Pillow's "RGBX" raw mode does); output: per row the filter byte then the row. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t lc_png_abi(void) { return 1; }

static int64_t distance(const uint8_t *restrict v, int64_t n)
{
    /* min(v, 256 - v) as unsigned bytes (pminub), summed per 64 Ki bytes in 32 bits (at most 128 each): loops
     * gcc -O3 turns into vector code; the sum is the same as Pillow's. */
    int64_t sum = 0;
    for (int64_t start = 0; start < n; start += 1 << 16) {
        int64_t end = start + (1 << 16) < n ? start + (1 << 16) : n;
        uint32_t part = 0;
        for (int64_t i = start; i < end; i++) {
            uint8_t x = v[i], minus = (uint8_t)-x;
            part += x < minus ? x : minus;
        }
        sum += part;
    }
    return sum;
}

static void paeth_row(const uint8_t *restrict cur, const uint8_t *restrict prior,
                      uint8_t *restrict out, int64_t n, int64_t bpp)
{
    for (int64_t i = 0; i < bpp; i++)
        out[i] = (uint8_t)(cur[i] - prior[i]);
    for (int64_t i = bpp; i < n; i++) {
        /* 16-bit lanes and no branches: the form gcc vectorizes */
        int16_t a = cur[i - bpp], b = prior[i], c = prior[i - bpp];
        int16_t pa = (int16_t)(b - c), pb = (int16_t)(a - c), pc = (int16_t)(a + b - 2 * c);
        pa = (int16_t)abs(pa);
        pb = (int16_t)abs(pb);
        pc = (int16_t)abs(pc);
        int16_t take_a = (int16_t)-((pa <= pb) & (pa <= pc)), take_b = (int16_t)-(pb <= pc);
        int16_t pred = (int16_t)((a & take_a) | (~take_a & ((b & take_b) | (c & ~take_b))));
        out[i] = (uint8_t)(cur[i] - pred);
    }
}

/* `rgbx`: height rows of width 4-byte pixels; `out`: height * (1 + 3 * width) bytes; `work`:
 * 4 * 3 * width bytes (this row and the one above unfiltered, the candidate and the best).
 * Returns the bytes written, -1 for sizes that do not fit. */
int64_t lc_png_rows_rgbx(const uint8_t *rgbx, int64_t width, int64_t height, uint8_t *out,
                         uint8_t *work)
{
    if (width <= 0 || height < 0)
        return -1;
    const int64_t n = 3 * width, bpp = 3;
    uint8_t *cur = work, *prior = work + n, *cand = work + 2 * n, *best = work + 3 * n;
    memset(prior, 0, (size_t)n);
    for (int64_t y = 0; y < height; y++) {
        const uint8_t *src = rgbx + y * 4 * width;
        /* a pixel's 4 bytes copied at once, the next pixel's overwriting the fourth; the last
         * pixel byte by byte (its fourth byte would land in the next buffer) */
        for (int64_t x = 0; x < width - 1; x++)
            memcpy(cur + 3 * x, src + 4 * x, 4);
        memcpy(cur + n - 3, src + 4 * (width - 1), 3);
        uint8_t *row = out + y * (n + 1);
        uint8_t filter = 0;
        int64_t sum = distance(cur, n);
        const uint8_t *kept = cur;
        if (sum > 0) {                  /* up */
            for (int64_t i = 0; i < n; i++)
                cand[i] = (uint8_t)(cur[i] - prior[i]);
            int64_t s = distance(cand, n);
            if (s < sum) {
                sum = s, filter = 2;
                uint8_t *t = best; best = cand; cand = t; kept = best;
            }
        }
        if (sum > 0) {                  /* sub */
            for (int64_t i = 0; i < bpp; i++)
                cand[i] = cur[i];
            for (int64_t i = bpp; i < n; i++)
                cand[i] = (uint8_t)(cur[i] - cur[i - bpp]);
            int64_t s = distance(cand, n);
            if (s < sum) {
                sum = s, filter = 1;
                uint8_t *t = best; best = cand; cand = t; kept = best;
            }
        }
        if (sum > 0) {                  /* Paeth: left and upper-left are 0 in the first pixel */
            paeth_row(cur, prior, cand, n, bpp);
            int64_t s = distance(cand, n);
            if (s < sum) {
                filter = 4;
                kept = cand;
            }
        }
        row[0] = filter;
        memcpy(row + 1, kept, (size_t)n);
        uint8_t *t = prior; prior = cur; cur = t;
    }
    return height * (n + 1);
}
