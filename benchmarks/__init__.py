"""daxpy's benchmark suites on one shared kit: ``daxpy bench SUITE`` runs one."""
