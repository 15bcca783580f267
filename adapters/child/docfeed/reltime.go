package docfeed

import (
	"fmt"
	"time"
)

// RelativeTime words the age of a commit made at then, seen at now, the
// way Git's %cr does in the C locale, with Git's rounding: seconds under
// 90 s, then minutes (rounded) under 90, hours under 36, days under 14,
// weeks under 70 days, months under a year, "N years, M months" under five
// years and whole years beyond. A time after now is "in the future".
//
// Git rounds each unit from the previous, already rounded one, and so does
// this; clients recomputing ages from committedAtMs get the same words.
func RelativeTime(then, now time.Time) string {
	nowS, thenS := now.Unix(), then.Unix()
	if thenS > nowS {
		return "in the future"
	}
	diff := nowS - thenS
	if diff < 90 {
		return ago(diff, "second")
	}
	minutes := (diff + 30) / 60
	if minutes < 90 {
		return ago(minutes, "minute")
	}
	hours := (minutes + 30) / 60
	if hours < 36 {
		return ago(hours, "hour")
	}
	days := (hours + 12) / 24
	switch {
	case days < 14:
		return ago(days, "day")
	case days < 70:
		return ago((days+3)/7, "week")
	case days < 365:
		return ago((days+15)/30, "month")
	case days < 1825:
		// Months rounded to the nearest, from days: 365 days make 12.
		total := (days*12*2 + 365) / (365 * 2)
		years, months := total/12, total%12
		if months == 0 {
			return ago(years, "year")
		}
		return fmt.Sprintf("%s, %s ago", count(years, "year"), count(months, "month"))
	default:
		return ago((days+183)/365, "year")
	}
}

func ago(n int64, unit string) string { return count(n, unit) + " ago" }

// count is "1 unit" or "N units".
func count(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
