// jemalloc reads its options from this symbol, if the program defines it, before the first
// allocation.
//
// dirty_decay_ms:-1 keeps freed pages for reuse instead of returning them to the kernel over
// the next seconds. scrypt takes and frees 16 MiB per password hash; returned, those pages
// fault back in (4,096 faults a hash) and password sign-ins ran 20% slower than on glibc's
// malloc, which keeps them too. Resident memory stays at the peak the heap reached, as on glibc.
const char *malloc_conf = "dirty_decay_ms:-1";
