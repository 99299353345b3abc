package compat

// optionRows: see doc.go.
var optionRows = []Row{}
