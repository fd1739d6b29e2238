package harness

import (
	"os"
	"testing"
)

func TestReadmeTableIsCurrent(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceReadmeTable(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(data) {
		t.Fatal("README.md's capability table is stale: run `make readme-table`")
	}
}
