package openapi

import (
	"strings"
	"testing"
)

func TestMerge_APathOrSchemaGivenByTwoFilesIsRefused(t *testing.T) {
	doc := map[string]any{"paths": map[string]any{"/a": "x"}}
	err := mergeSection(doc, map[string]any{"paths": map[string]any{"/a": "y"}}, "area.yaml", "paths")
	if err == nil || !strings.Contains(err.Error(), `area.yaml: paths "/a" is already in the document`) {
		t.Fatalf("merging a path twice: %v", err)
	}
	if err := mergeSection(doc, map[string]any{"paths": map[string]any{"/b": "y"}}, "area.yaml", "paths"); err != nil {
		t.Fatal(err)
	}
	if got := doc["paths"].(map[string]any); len(got) != 2 || got["/a"] != "x" || got["/b"] != "y" {
		t.Fatalf("paths after merging /b: %v", got)
	}
}
