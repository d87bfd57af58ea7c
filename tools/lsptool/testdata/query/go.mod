module example.com/query

go 1.22
