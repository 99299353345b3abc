package compat

// annotationRows: see doc.go.
var annotationRows = []Row{}
