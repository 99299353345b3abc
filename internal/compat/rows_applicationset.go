package compat

// applicationSetRows: see doc.go.
var applicationSetRows = []Row{}
