package blob_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
)

// TestCopy copies the database's stores into S3, as an installation moving
// its blobs to object storage does: what is missing is sent, what is there
// is not, a second run sends nothing, and every blob reads back the same.
func TestCopy(t *testing.T) {
	for _, src := range []struct {
		name string
		new  func(testing.TB) *fixture
	}{{"dir", newDir}, {"postgres", newPostgres}} {
		t.Run(src.name+" to s3", func(t *testing.T) {
			ctx := context.Background()
			from, to := src.new(t), newS3(t)
			contents := [][]byte{data(81, 0), data(82, 1000), data(83, 2*chunk+5)}
			for _, c := range contents {
				put(t, from.b, c)
			}
			put(t, to.b, contents[1]) // there already
			var seen []string
			res, err := blob.Copy(ctx, to.b.(blob.Destination), from.b.(blob.Source), func(sha string, copied bool) {
				seen = append(seen, sha)
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Copied != 2 || res.Present != 1 || res.Bytes != 2*chunk+5 || len(seen) != 3 {
				t.Fatalf("Copy = %+v (%d reported); want 2 copied, 1 present, %d bytes", res, len(seen), 2*chunk+5)
			}
			for _, c := range contents {
				if got := readAll(t, to.b, shaOf(c)); !bytes.Equal(got, c) {
					t.Fatalf("%d bytes: copy differs", len(c))
				}
			}
			if res, err := blob.Copy(ctx, to.b.(blob.Destination), from.b.(blob.Source), nil); err != nil || res.Copied != 0 || res.Present != 3 {
				t.Fatalf("second Copy = %+v, %v; want all 3 present", res, err)
			}
		})
	}
}

// TestCopyDamagedSource: a source blob whose bytes no longer hash to its
// name stops the copy with an error naming it; the destination has nothing
// under that name.
func TestCopyDamagedSource(t *testing.T) {
	ctx := context.Background()
	from, to := newDir(t), newS3(t)
	sha := put(t, from.b, data(84, 5000))
	p, err := from.b.(*blob.Dir).Path(sha)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("bit rot"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = blob.Copy(ctx, to.b.(blob.Destination), from.b.(blob.Source), nil)
	if err == nil || !strings.Contains(err.Error(), sha) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Copy of a damaged blob: %v", err)
	}
	if _, err := to.b.Stat(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("the destination has the damaged blob's name: %v", err)
	}
}
