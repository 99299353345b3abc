'just a string'
