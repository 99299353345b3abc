package compat

// generatorRows: see doc.go.
var generatorRows = []Row{}
