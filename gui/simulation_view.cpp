// in progress (issue 8)
