package main

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// packed is a message found in a resource: the resource itself (path "") or the content of an
// Any at path, or the error unpacking it.
type packed struct {
	path string
	msg  proto.Message
	err  error
}

// unpackAll returns msg and, recursively, every message packed in an Any field below it.
// protoc-gen-validate checks an Any only against its own rules (e.g. required), never its
// content, and Envoy validates a typed_config when it instantiates the extension.
func unpackAll(msg proto.Message) []packed {
	out := []packed{{path: "", msg: msg}}
	walk(msg.ProtoReflect(), "", &out)
	return out
}

func walk(m protoreflect.Message, path string, out *[]packed) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		name := join(path, string(fd.Name()))
		switch {
		case fd.IsList():
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				visit(list.Get(i).Message(), fmt.Sprintf("%s[%d]", name, i), out)
			}
		case fd.IsMap():
			if fd.MapValue().Kind() != protoreflect.MessageKind {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				visit(mv.Message(), fmt.Sprintf("%s[%v]", name, k.Interface()), out)
				return true
			})
		default:
			visit(v.Message(), name, out)
		}
		return true
	})
}

func visit(m protoreflect.Message, path string, out *[]packed) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			*out = append(*out, packed{path: path, err: fmt.Errorf("cannot unpack %s: %w", a.GetTypeUrl(), err)})
			return
		}
		*out = append(*out, packed{path: path, msg: inner})
		walk(inner.ProtoReflect(), path, out)
		return
	}
	walk(m, path, out)
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}
