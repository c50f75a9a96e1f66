package state

import (
	"encoding/json"
	"time"
)

// Timestamp is how hostemu writes an instant in JSON: RFC 3339 in UTC with exactly
// three fractional digits ("2026-11-21T12:00:03.800Z"), whatever the instant's
// precision, so that clients with strict parsers (Python 3.10's fromisoformat, Java's
// .SSSX) read every one. Sub-millisecond parts are cut, never rounded up: a time
// written is never later than the clock that made it. Reading accepts any RFC 3339.
type Timestamp time.Time

// MarshalJSON writes the instant as a JSON string of AppendTimestamp.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(`"2006-01-02T15:04:05.000Z"`))
	b = append(b, '"')
	b = AppendTimestamp(b, time.Time(t))
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time, as time.Time does.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	return (*time.Time)(t).UnmarshalJSON(b)
}

// TimestampPtr is t as a *Timestamp, nil when t is.
func TimestampPtr(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	ts := Timestamp(*t)
	return &ts
}

// AppendTimestamp appends t in UTC as RFC 3339 with exactly three fractional digits.
// The world holds years 1 to 9999 only; any other year goes through time.AppendFormat.
func AppendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	hour, min, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, min, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

// appendDigits appends n in exactly width decimal digits.
func appendDigits(b []byte, n, width int) []byte {
	var buf [4]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, buf[:width]...)
}

// The state types write their times as Timestamps, in every answer and in state
// exports; reading them back is encoding/json's default, any RFC 3339. Each
// MarshalJSON embeds the type's fields under a method-less copy of the type and
// shadows only the time fields, so a field added later is written without a change
// here.

type (
	projectFields    Project
	timingsFields    Timings
	logLineFields    LogLine
	deploymentFields Deployment
	tlsFields        TLS
	domainFields     Domain
	detachmentFields Detachment
)

// MarshalJSON writes the project with its time as a Timestamp.
func (p Project) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		projectFields
		CreatedAt Timestamp `json:"created_at"`
	}{projectFields(p), Timestamp(p.CreatedAt)})
}

// MarshalJSON writes the timings as Timestamps.
func (t Timings) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		timingsFields
		QueuedAt   *Timestamp `json:"queued_at"`
		BuildingAt *Timestamp `json:"building_at"`
		ReadyAt    *Timestamp `json:"ready_at"`
		ErrorAt    *Timestamp `json:"error_at"`
	}{timingsFields(t), TimestampPtr(t.QueuedAt), TimestampPtr(t.BuildingAt), TimestampPtr(t.ReadyAt), TimestampPtr(t.ErrorAt)})
}

// MarshalJSON writes the log line with its time as a Timestamp.
func (l LogLine) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		logLineFields
		CreatedAt Timestamp `json:"created_at"`
	}{logLineFields(l), Timestamp(l.CreatedAt)})
}

// MarshalJSON writes the deployment with its time as a Timestamp (its timings and
// logs write theirs).
func (d Deployment) MarshalJSON() ([]byte, error) {
	return appendDeployment(make([]byte, 0, 512), &d), nil
}

// AppendDeploymentJSON appends d as its MarshalJSON writes it (compact, HTML characters
// escaped: as json.Marshal leaves it inside another value).
func AppendDeploymentJSON(b []byte, d *Deployment) []byte { return appendDeployment(b, d) }

// marshalDeploymentReflective is Deployment.MarshalJSON through encoding/json: the
// form appendDeployment must write (its tests compare the two).
func marshalDeploymentReflective(d Deployment) ([]byte, error) {
	return json.Marshal(struct {
		deploymentFields
		CreatedAt Timestamp `json:"created_at"`
	}{deploymentFields(d), Timestamp(d.CreatedAt)})
}

// MarshalJSON writes the certificate with its expiry as a Timestamp.
func (t TLS) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		tlsFields
		ExpiresAt *Timestamp `json:"expires_at"`
	}{tlsFields(t), TimestampPtr(t.ExpiresAt)})
}

// MarshalJSON writes the domain with its time as a Timestamp (its certificate writes
// its own).
func (d Domain) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		domainFields
		CreatedAt Timestamp `json:"created_at"`
	}{domainFields(d), Timestamp(d.CreatedAt)})
}

// MarshalJSON writes the detachment with its times as Timestamps.
func (d Detachment) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		detachmentFields
		DeleteAt Timestamp `json:"deleted_at"`
		DetachAt Timestamp `json:"detach_at"`
	}{detachmentFields(d), Timestamp(d.DeleteAt), Timestamp(d.DetachAt)})
}
