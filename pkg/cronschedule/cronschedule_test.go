package cronschedule

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	at := time.Date(2026, 3, 2, 7, 10, 0, 0, time.UTC) // a Monday
	for _, tc := range []struct {
		schedule string
		// next is the first run after at; wantErr a part of the error.
		next    time.Time
		wantErr string
	}{
		{schedule: "30 7 * * 1-5", next: time.Date(2026, 3, 2, 7, 30, 0, 0, time.UTC)},
		{schedule: "0 0 1 JAN *", next: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{schedule: "@hourly", next: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)},
		{schedule: "@every 1h", next: time.Date(2026, 3, 2, 8, 10, 0, 0, time.UTC)},
		{schedule: "0 */1 * * * *", wantErr: "five fields"},
		{schedule: "@5minutes", wantErr: "five fields"},
		{schedule: "0 0 L * *", wantErr: "five fields"},
		{schedule: "61 * * * *", wantErr: "five fields"},
		{schedule: "", wantErr: "five fields"},
		{schedule: "CRON_TZ=UTC 0 8 * * *", wantErr: "give the time zone in timeZone"},
		{schedule: "TZ=Europe/Paris 0 8 * * *", wantErr: "give the time zone in timeZone"},
	} {
		s, err := Parse(tc.schedule)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want one saying %q", tc.schedule, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.schedule, err)
			continue
		}
		if got := s.Next(at); !got.Equal(tc.next) {
			t.Errorf("%q: next run %s, want %s", tc.schedule, got, tc.next)
		}
	}
}

// TestZone: named zones load from the built-in database, so a binary
// without zone files on its machine (the images) reads them too.
func TestZone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offset  int // at 2026-01-15 12:00 UTC, in seconds
		wantErr bool
	}{
		{name: "", offset: 0},
		{name: "UTC", offset: 0},
		{name: "Europe/Paris", offset: 3600},
		{name: "Asia/Tokyo", offset: 9 * 3600},
		{name: "Mars/Olympus_Mons", wantErr: true},
		{name: "../etc/passwd", wantErr: true},
	} {
		loc, err := Zone(tc.name, time.UTC)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "IANA time zone database") {
				t.Errorf("%q: err %v, want one naming the IANA database", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.name, err)
			continue
		}
		if _, off := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off != tc.offset {
			t.Errorf("%q: offset %d s, want %d", tc.name, off, tc.offset)
		}
	}
}
