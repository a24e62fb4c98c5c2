module github.com/toolgate/toolgate/bench

go 1.26.0
