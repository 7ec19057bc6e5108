/* Fibers (sim.h): the simulated threads, all on the one OS thread.
 *
 * A switch saves the callee-saved registers and the stack pointer and loads
 * the other fiber's (x86-64; the simulator is a tool of the host). The
 * program's thread-local variables (the library's thread record pointer,
 * its delegation slots: every __thread of the executable) live in one static
 * TLS block; each fiber keeps its own copy, swapped in at a switch, so that
 * every simulated thread has its own. glibc's own thread state (errno,
 * malloc's caches) is shared: the runtime never switches inside libc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "sim.h"

#if !defined(__x86_64__)
#error "the simulator's fibers switch x86-64 registers"
#endif

sim_fiber_t *sim_cur;
sim_fiber_t *sim_fibers[SIM_MAX_FIBERS];
int sim_nfibers;
uint64_t sim_switches;

static void *tls_block;       /* the executable's TLS block (the running fiber's) */
static size_t tls_size;
static const void *tls_image; /* its initial contents */
static size_t tls_image_size;

#define FIBER_STACK (256u * 1024)

/* sim_swap(&from->sp, to->sp): callee-saved registers, MXCSR and the x87
 * control word on the old stack; the new fiber's popped from its stack */
void sim_swap(void **save, void *load);
__asm__(".text\n"
        ".globl sim_swap\n"
        ".type sim_swap,@function\n"
        "sim_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size sim_swap, .-sim_swap\n"
        /* a new fiber starts here: r12 = its entry, r13 = its fiber */
        ".globl sim_fiber_start\n"
        ".type sim_fiber_start,@function\n"
        "sim_fiber_start:\n"
        "  movq %r13, %rdi\n  callq *%r12\n  ud2\n"
        ".size sim_fiber_start, .-sim_fiber_start\n");
void sim_fiber_start(void);

static int find_tls(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
            tls_block = info->dlpi_tls_data;
            tls_size = info->dlpi_phdr[i].p_memsz;
            tls_image = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            tls_image_size = info->dlpi_phdr[i].p_filesz;
        }
    return 1; /* the executable is the first object */
}

void sim_fiber_init(void)
{
    dl_iterate_phdr(find_tls, NULL);
    if (tls_size && !tls_block) {
        fprintf(stderr, "numalock sim: cannot find the program's thread-local block\n");
        exit(1);
    }
    sim_fiber_t *f = calloc(1, sizeof *f);
    if (!f || (tls_size && !(f->tls = malloc(tls_size))))
        abort();
    f->id = 0;
    f->state = SIM_RUNNING;
    f->cpu = -1;
    f->joiner = -1;
    f->futex_next = -1;
    sim_fibers[0] = f;
    sim_nfibers = 1;
    sim_cur = f;
}

/* a fiber's first frame: its entry runs, then it ends */
static void fiber_main(sim_fiber_t *f) __attribute__((noreturn, used));
static void fiber_main(sim_fiber_t *f)
{
    void *ret = f->fn(f->arg);
    sim_exit_fiber(ret);
}

sim_fiber_t *sim_fiber_create(void *(*fn)(void *), void *arg, int cpu)
{
    int id = 1; /* the lowest free slot: the same ids run to run */
    while (id < SIM_MAX_FIBERS && sim_fibers[id])
        id++;
    if (id >= SIM_MAX_FIBERS)
        return NULL;
    sim_fiber_t *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->stack_size = FIBER_STACK;
    f->stack = mmap(NULL, f->stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (f->stack == MAP_FAILED || (tls_size && !(f->tls = calloc(1, tls_size)))) {
        if (f->stack != MAP_FAILED)
            munmap(f->stack, f->stack_size);
        free(f);
        return NULL;
    }
    if (tls_image_size)
        memcpy(f->tls, tls_image, tls_image_size);
    f->id = id;
    f->fn = fn;
    f->arg = arg;
    f->cpu = cpu;
    f->joiner = -1;
    f->futex_next = -1;
    f->state = SIM_BLOCKED;
    /* the first frame sim_swap pops (see the layout above sim_fiber_start) */
    uint64_t *sp = (uint64_t *)((char *)f->stack + f->stack_size);
    *--sp = 0;
    *--sp = 0;
    *--sp = (uint64_t)(uintptr_t)sim_fiber_start;
    *--sp = 0;                                  /* rbp */
    *--sp = 0;                                  /* rbx */
    *--sp = (uint64_t)(uintptr_t)fiber_main;    /* r12 */
    *--sp = (uint64_t)(uintptr_t)f;             /* r13 */
    *--sp = 0;                                  /* r14 */
    *--sp = 0;                                  /* r15 */
    *--sp = 0x037Full << 32 | 0x1F80u;          /* MXCSR, x87 control word */
    f->sp = sp;
    sim_fibers[id] = f;
    if (id >= sim_nfibers)
        sim_nfibers = id + 1;
    return f;
}

void sim_fiber_switch(sim_fiber_t *from, sim_fiber_t *to)
{
    to->state = SIM_RUNNING;
    if (from == to)
        return;
    sim_switches++;
    if (tls_size) {
        memcpy(from->tls, tls_block, tls_size);
        memcpy(tls_block, to->tls, tls_size);
    }
    sim_cur = to;
    to->state = SIM_RUNNING;
    sim_swap(&from->sp, to->sp);
}

void sim_fiber_free(sim_fiber_t *f)
{
    if (f->stack)
        munmap(f->stack, f->stack_size);
    free(f->tls);
    sim_fibers[f->id] = NULL;
    free(f);
}
