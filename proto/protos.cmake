# Generated protobuf/gRPC code, included from the top-level CMakeLists.txt so that protoc
# sees the sources as "proto/<name>.proto" (the import paths the .proto files use) and
# writes <build>/proto/<name>.pb.h. Kept in its own library so the heavy generated headers are
# compiled once.
add_library(gridcast_proto STATIC proto/plan.proto proto/control.proto)
target_link_libraries(gridcast_proto PUBLIC protobuf::libprotobuf gRPC::grpc++)
target_include_directories(gridcast_proto PUBLIC ${CMAKE_BINARY_DIR})
# Generated files define the same file-local tables: one translation unit each.
set_target_properties(gridcast_proto PROPERTIES UNITY_BUILD OFF)
protobuf_generate(TARGET gridcast_proto LANGUAGE cpp PROTOC_OUT_DIR ${CMAKE_BINARY_DIR})
protobuf_generate(TARGET gridcast_proto LANGUAGE grpc
  GENERATE_EXTENSIONS .grpc.pb.h .grpc.pb.cc
  PLUGIN "protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>"
  PROTOC_OUT_DIR ${CMAKE_BINARY_DIR})
