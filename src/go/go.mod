module serverbench

go 1.19
