/* A group of hlog payload texts -> their inflated payloads, joined, in one call: the base64
 * and the inflation that batch._inflate_plain otherwise makes one Python call each a line.
 * Linked with ISA-L (Debian's libisal-dev: the same inflater as the `isal` wheel codec.py
 * uses); without its header this file does not build and the Python calls run instead.
 *
 * It takes only what payload._parse_common_payload takes whole and is sure to decode the
 * same: strict base64 (length a multiple of 4, the alphabet, '=' only as the last one or
 * two, no bits left over), a compressed V2 cookie, a compressed length of exactly the bytes
 * after the 8-byte header and at most max_compressed, a zlib header of deflate with a window
 * ISA-L and zlib agree on, no preset dictionary, and a stream that ends, checksum verified,
 * on the payload's last byte. Anything else is refused for the whole group, which then takes
 * the Python calls, and their errors, unchanged.
 *
 * Bounded: a payload inflates only into the room left in `out`, and no further than 40
 * bytes of header plus the payload length its own first 8 inflated bytes declare. The
 * caller retries with more room up to its own limit. ctypes releases the GIL during the
 * call, so two threads can each inflate a group. */
#include <stdint.h>
#include <string.h>
#include <isa-l/igzip_lib.h>

#define LI_ABI 1
#define LI_REFUSED (-1)
#define LI_NO_ROOM (-2)

int64_t li_abi(void) { return LI_ABI; }

static int32_t li_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* A quad's four characters, each looked up in its own table, ORed: the three decoded bytes
 * in the word's low three bytes in memory order (little-endian), and LI_BAD for a character
 * outside the alphabet. One lookup a character and one store a quad: a character-at-a-time
 * decoder took ~7 instructions a character, ~2 % of a one-core hgrm's. */
#define LI_BAD 0x01000000u
static uint32_t li_quad[4][256];

/* (filled when the object is loaded, before any thread can call in) */
__attribute__((constructor)) static void li_fill_tables(void)
{
    for (int c = 0; c < 256; c++) {
        int32_t v = li_value((uint8_t)c);
        if (v < 0) {
            for (int k = 0; k < 4; k++)
                li_quad[k][c] = LI_BAD;
            continue;
        }
        uint32_t u = (uint32_t)v;
        li_quad[0][c] = u << 2;
        li_quad[1][c] = u >> 4 | (u & 0x0f) << 12;
        li_quad[2][c] = (u >> 2) << 8 | (u & 0x03) << 22;
        li_quad[3][c] = u << 16;
    }
}

static int li_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* text[0..length) strict base64 -> raw (with room for one byte more than it decodes to);
 * the decoded size, or -1 when not strict. */
static int64_t li_base64(const uint8_t *restrict text, int64_t length, uint8_t *restrict raw)
{
    if (length <= 0 || length % 4)
        return -1;
    int64_t pad = text[length - 1] == '=' ? (text[length - 2] == '=' ? 2 : 1) : 0;
    int64_t whole = length / 4 - (pad ? 1 : 0);
    uint8_t *o = raw;
    uint32_t bad = 0;
    for (int64_t q = 0; q < whole; q++, text += 4, o += 3) {
        uint32_t w = li_quad[0][text[0]] | li_quad[1][text[1]] | li_quad[2][text[2]]
                     | li_quad[3][text[3]];
        bad |= w;
        memcpy(o, &w, 4);             /* (its fourth byte is overwritten by the next quad) */
    }
    if (bad & LI_BAD)
        return -1;
    if (pad) {
        int32_t a = li_value(text[0]), b = li_value(text[1]);
        int32_t c = pad == 1 ? li_value(text[2]) : 0;
        if ((a | b | c) < 0)
            return -1;
        if (pad == 2 ? (b & 0x0f) : (c & 0x03))
            return -1;                 /* bits left over: the Python calls decide */
        *o++ = (uint8_t)(a << 2 | b >> 4);
        if (pad == 1)
            *o++ = (uint8_t)(b << 4 | c >> 2);
    }
    return o - raw;
}

/* Payload r is text[offsets[r] .. offsets[r + 1]); scratch holds at least the longest one's
 * decoded bytes. Payload r's inflated bytes go to out[out_offsets[r] .. out_offsets[r + 1]).
 * Returns the total inflated size, LI_REFUSED (the group is not one this pass takes), or
 * LI_NO_ROOM (out's capacity ran out: call again with more). */
int64_t li_inflate_group(const uint8_t *restrict text, const int64_t *restrict offsets,
                         int64_t n, int64_t max_compressed, uint8_t *restrict scratch,
                         uint8_t *restrict out, int64_t capacity,
                         int64_t *restrict out_offsets)
{
    if (!li_little_endian())
        return LI_REFUSED;             /* (li_quad's words are laid out for it) */
    struct inflate_state state;
    int64_t o = 0;
    out_offsets[0] = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t size = li_base64(text + offsets[r], offsets[r + 1] - offsets[r], scratch);
        if (size < 10)
            return LI_REFUSED;
        const uint8_t *p = scratch;
        uint32_t cookie = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        int64_t compressed = (int32_t)((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16
                                       | (uint32_t)p[6] << 8 | p[7]);
        if ((cookie & ~0xf0u) != 0x1c849304u || compressed != size - 8
                || compressed > max_compressed)
            return LI_REFUSED;
        uint8_t cmf = p[8], flg = p[9];
        if ((cmf & 0x0f) != 8 || cmf >> 4 > 7 || (flg & 0x20) || ((cmf << 8) | flg) % 31)
            return LI_REFUSED;
        int64_t room = capacity - o;
        if (room > UINT32_MAX)
            room = UINT32_MAX;
        isal_inflate_init(&state);
        state.crc_flag = ISAL_ZLIB;
        state.next_in = (uint8_t *)p + 8;
        state.avail_in = (uint32_t)compressed;
        state.next_out = out + o;
        state.avail_out = (uint32_t)room;
        int status = isal_inflate(&state);
        if (status != ISAL_DECOMP_OK)
            return LI_REFUSED;
        if (state.block_state != ISAL_BLOCK_FINISH)
            return state.avail_out == 0 ? LI_NO_ROOM : LI_REFUSED;
        if (state.avail_in != 0 || state.read_in_length >= 8)
            return LI_REFUSED;         /* bytes after the stream's end */
        int64_t inflated = state.total_out;
        if (inflated >= 8) {
            const uint8_t *q = out + o;
            int64_t declared = (int32_t)((uint32_t)q[4] << 24 | (uint32_t)q[5] << 16
                                         | (uint32_t)q[6] << 8 | q[7]);
            if (declared < 0 || inflated > 40 + declared)
                return LI_REFUSED;     /* more than the payload says it holds */
        }
        o += inflated;
        out_offsets[r + 1] = o;
    }
    return o;
}
