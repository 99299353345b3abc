package compat

// sourceRows: see doc.go.
var sourceRows = []Row{}
