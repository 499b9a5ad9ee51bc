// Nothing to call: the target exists for the `malloc_conf` it defines (see MallocConf.c).
