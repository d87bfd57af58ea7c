module example.com/preexisting

go 1.22
