/*******************************************************************************
 * ring.c — a fixed-size ring buffer
 *
 * ============================================================================
 * The buffer never allocates after init; writers overwrite the oldest entry.
 * ============================================================================
 ******************************************************************************/

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RING_SIZE 64

typedef struct {
    uint8_t data[RING_SIZE];
    size_t head;
    size_t len;
} ring_t;

static const uint8_t crc_table[16] = {
    0x00, 0x07, 0x0e, 0x09, 0x1c, 0x1b, 0x12, 0x15,
    0x38, 0x3f, 0x36, 0x31, 0x24, 0x23, 0x2a, 0x2d,
};

void ring_init(ring_t *r) {
    memset(r, 0, sizeof *r);
}

void ring_push(ring_t *r, uint8_t b) {
    r->data[(r->head + r->len) % RING_SIZE] = b;
    if (r->len < RING_SIZE) {
        r->len++;
    } else {
        r->head = (r->head + 1) % RING_SIZE;
    }
}

int ring_pop(ring_t *r, uint8_t *b) {
    if (r->len == 0) {
        return -1;
    }
    *b = r->data[r->head];
    r->head = (r->head + 1) % RING_SIZE;
    r->len--;
    return 0;
}

uint8_t crc4(const uint8_t *p, size_t n) {
    uint8_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c = crc_table[(c ^ p[i]) & 0x0f];
    }
    return c;
}
