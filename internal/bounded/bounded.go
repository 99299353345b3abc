// Package bounded reads files and streams of bounded size, so that an
// oversized input is an error naming the limit instead of exhausting
// memory.
package bounded

import (
	"fmt"
	"io"
	"os"
)

// ReadAll reads r to the end; more than limit bytes is an error
// "larger than <limit> bytes".
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// ReadFile reads the file at path; more than limit bytes is an error
// "<path>: larger than <limit> bytes". Other errors are the os package's,
// which name the path too.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadAll(f, limit)
	if err != nil {
		if _, ok := err.(*os.PathError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}
