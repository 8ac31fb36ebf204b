module tiny

go 1.18
