package bounded

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(exact, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte("123456"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(exact, 5); err != nil || string(data) != "12345" {
		t.Errorf("ReadFile(exact, 5) = %q, %v; want the content", data, err)
	}
	if _, err := ReadFile(big, 5); err == nil || err.Error() != big+": larger than 5 bytes" {
		t.Errorf("ReadFile(big, 5) error = %v, want %q", err, big+": larger than 5 bytes")
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 5); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ReadFile(missing) error = %v, want a not-exist error naming the file", err)
	}
	if _, err := ReadFile(dir, 5); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("ReadFile(directory) error = %v, want an error naming it", err)
	}
}

func TestReadAll(t *testing.T) {
	if data, err := ReadAll(strings.NewReader("abc"), 3); err != nil || string(data) != "abc" {
		t.Errorf("ReadAll(3 bytes, 3) = %q, %v", data, err)
	}
	if _, err := ReadAll(strings.NewReader("abcd"), 3); err == nil || err.Error() != "larger than 3 bytes" {
		t.Errorf("ReadAll(4 bytes, 3) error = %v", err)
	}
}
