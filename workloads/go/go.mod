module causeway/workloads

go 1.19
