package state

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzRecordRoundTrip: ParseRecord never panics, and any record it accepts
// renders to bytes that parse back to the same record, with Bytes stable
// from then on (a rewrite of an untouched record changes nothing).
func FuzzRecordRoundTrip(f *testing.F) {
	for _, s := range []string{
		"window=fmses:fm-t1\nendpoint_task_id=t1\nharness=claude\n",
		"a=1\na=2\n",
		"",
		"a=1\r\n",
		"k=v",
		"\xff\xfe\x00=",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecord(data)
		if err != nil {
			return
		}
		b1, err := r.Bytes()
		if err != nil {
			t.Fatalf("ParseRecord accepted %q but Bytes refused it: %v", data, err)
		}
		r2, err := ParseRecord(b1)
		if err != nil {
			t.Fatalf("Bytes produced %q, which ParseRecord refuses: %v", b1, err)
		}
		if !slices.Equal(r.Entries, r2.Entries) {
			t.Fatalf("round trip changed the record\n in %q\n r1 %+v\n r2 %+v", data, r.Entries, r2.Entries)
		}
		b2, err := r2.Bytes()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("Bytes not stable: %q then %q (%v)", b1, b2, err)
		}
		// Every entry's key and value must read back through Get for the
		// last line of each key.
		for i, e := range r.Entries {
			last := true
			for _, later := range r.Entries[i+1:] {
				if later.Key == e.Key {
					last = false
					break
				}
			}
			if last && r2.Get(e.Key) != e.Value {
				t.Fatalf("Get(%q) = %q, want %q", e.Key, r2.Get(e.Key), e.Value)
			}
		}
	})
}

// FuzzRecordWrite builds a record from arbitrary key/value pairs, keeping
// only those the record format allows, and checks it survives being written
// and read back: no value can smuggle in a line of its own.
func FuzzRecordWrite(f *testing.F) {
	f.Add("window", "fmses:fm-t1", "note", "a=b", "kind", "")
	f.Add("a", "x\nwindow=evil", "a", "2", "b", "\r")
	f.Add("", "v", "k k", "v", "k", "\x00")
	f.Add("k", "ünï\tcode", "k", "=", "z", "  ")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		var r Record
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if checkKey(kv[0]) != nil || CheckValue(kv[1]) != nil {
				continue
			}
			r.Entries = append(r.Entries, Entry{Key: kv[0], Value: kv[1]})
		}
		b, err := r.Bytes()
		if err != nil {
			t.Fatalf("Bytes refused entries that passed checkKey/CheckValue: %+v: %v", r.Entries, err)
		}
		back, err := ParseRecord(b)
		if err != nil {
			t.Fatalf("ParseRecord(%q) refused what Bytes wrote: %v", b, err)
		}
		if !slices.Equal(back.Entries, r.Entries) {
			t.Fatalf("written %+v, read back %+v (bytes %q)", r.Entries, back.Entries, b)
		}
		if got := bytes.Count(b, []byte("\n")); got != len(r.Entries) {
			t.Fatalf("%d entries wrote %d lines: %q", len(r.Entries), got, b)
		}
		// Set and Delete keep the record writable and readable.
		if len(r.Entries) > 0 {
			k := r.Entries[0].Key
			r.Set(k, "replaced")
			if r.Count(k) != 1 || r.Get(k) != "replaced" {
				t.Fatalf("Set(%q) left %d lines, Get=%q", k, r.Count(k), r.Get(k))
			}
			r.Delete(k)
			if r.Count(k) != 0 {
				t.Fatalf("Delete(%q) left %d lines", k, r.Count(k))
			}
			b, err := r.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if back, err := ParseRecord(b); err != nil || !slices.Equal(back.Entries, r.Entries) {
				t.Fatalf("after Set/Delete: read back %+v, %v, want %+v", back.Entries, err, r.Entries)
			}
		}
	})
}
