/* A function the way some hand-written assembly leaves it: a global label, no .type, no .size. */
    .arch armv8-a+crc
    .text
    .globl seed_label
    .hidden seed_label
seed_label:
    crc32w w0, w0, w0
    ret
    .section .note.GNU-stack,"",%progbits
