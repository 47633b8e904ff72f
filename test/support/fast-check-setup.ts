// fast-check caps a generated collection at about ten elements unless told otherwise, whatever
// maxLength says: a property declaring 120 events would never see more than ten. With this, a
// declared upper bound is the size the property is run at (docs/testing.md, "Properties").
import fc from "fast-check";

fc.configureGlobal({ defaultSizeToMaxWhenMaxSpecified: true });
