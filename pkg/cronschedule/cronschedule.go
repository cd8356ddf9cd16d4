// Package cronschedule reads a CronFederatedHPA rule's schedule and time
// zone. It is the one rule of what a schedule may be: the hub's admission
// webhook refuses with it, the CronFederatedHPA controller runs with it,
// and `shepherd convert` reports a Karmada rule the hub would refuse with
// it.
//
// The time zone database is built in (time/tzdata): the images carry no
// zone files, and without it every named zone but UTC would be refused.
package cronschedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Parse reads a schedule: five fields (minute hour day-of-month month
// day-of-week) or a descriptor such as @hourly or @every 1h. A time zone
// inside it (TZ= or CRON_TZ=) is refused: the rule's timeZone field says
// it. The error says what is wrong and the fix, without naming the field.
func Parse(schedule string) (cron.Schedule, error) {
	if strings.Contains(schedule, "TZ=") {
		return nil, errors.New("give the time zone in timeZone, not in the schedule")
	}
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return nil, fmt.Errorf("not a cron expression of five fields (minute hour day-of-month month day-of-week) or a descriptor such as @hourly: %v", err)
	}
	return s, nil
}

// Zone loads a time zone by its IANA name; "" is def.
func Zone(name string, def *time.Location) (*time.Location, error) {
	if name == "" {
		return def, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("not a name of the IANA time zone database (such as Europe/Paris or UTC): %v", err)
	}
	return loc, nil
}
