package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/docker/go-units"
)

// bytesValue is a size flag: a number of bytes, or one with a unit as
// Docker writes them ("512m", "4g").
type bytesValue struct{ v *int64 }

func (b bytesValue) Set(s string) error {
	n, err := units.RAMInBytes(s)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a size such as 512m or 4g, got %q", s)
	}
	*b.v = n
	return nil
}

func (b bytesValue) String() string {
	if b.v == nil || *b.v == 0 {
		return ""
	}
	return strconv.FormatInt(*b.v, 10)
}

// cpusValue is a CPU count ("1.5") kept as nano-CPUs.
type cpusValue struct{ v *int64 }

func (c cpusValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f > 1024 {
		return fmt.Errorf("want a number of CPUs such as 1.5, got %q", s)
	}
	*c.v = int64(f * 1e9)
	return nil
}

func (c cpusValue) String() string {
	if c.v == nil || *c.v == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(*c.v)/1e9, 'f', -1, 64)
}

// int64Value is a positive integer flag.
type int64Value int64

func (v *int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive integer, got %q", s)
	}
	*v = int64Value(n)
	return nil
}

func (v *int64Value) String() string {
	if v == nil || *v == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*v), 10)
}
