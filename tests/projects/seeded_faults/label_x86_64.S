/* A function the way some hand-written assembly leaves it: a global label, no .type, no .size. */
    .text
    .globl seed_label
    .hidden seed_label
seed_label:
    vpxor %ymm0, %ymm0, %ymm0
    vzeroupper
    xorl %eax, %eax
    ret
    .section .note.GNU-stack,"",@progbits
